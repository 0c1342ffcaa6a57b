import { describe, expect, it } from 'vitest';
import { currentSk, keys, lastTurnOfId } from '../../lib/kernel/memory-paths.js';

describe('batch logs and summaries keyed by their last turn (window reads by key range)', () => {
  it('take the last turn their id names, and sort by it across digit counts', () => {
    expect(lastTurnOfId('batch-12-18')).toBe(18);
    expect(lastTurnOfId('summary-1-5')).toBe(5);
    expect(lastTurnOfId('manual-3-140-0badcafe')).toBe(140);
    expect(lastTurnOfId('notes')).toBe(0);
    expect(keys.batchSk('batch-12-18')).toBe('BATCH#0000000018#batch-12-18');
    expect(keys.summarySk('manual-3-140-0badcafe')).toBe('SUMMARY#0000000140#manual-3-140-0badcafe');
    const sorted = ['batch-95-100', 'batch-1-9', 'batch-10-94'].map(keys.batchSk).sort();
    expect(sorted).toEqual(['batch-1-9', 'batch-10-94', 'batch-95-100'].map(keys.batchSk));
  });

  it("a window's key range holds the turn-keyed items from its first turn on, and none of the old keys", () => {
    const { low, high } = keys.turnKeyed('BATCH#', 10);
    const inRange = (sk: string) => sk >= low && sk <= high;
    expect(inRange(keys.batchSk('batch-8-10'))).toBe(true);
    expect(inRange(keys.batchSk('batch-1-9'))).toBe(false);
    expect(inRange(keys.batchSk('batch-9000000000-9999999999'))).toBe(true);
    expect(inRange('BATCH#batch-8-10')).toBe(false);
  });

  it('moves the keys written before them, and no other', () => {
    expect(currentSk('BATCH#batch-906-908')).toBe(keys.batchSk('batch-906-908'));
    expect(currentSk('SUMMARY#summary-906-908')).toBe(keys.summarySk('summary-906-908'));
    expect(currentSk(keys.summarySk('summary-906-908'))).toBe(keys.summarySk('summary-906-908'));
    expect(currentSk('TURN#0000000001')).toBe('TURN#0000000001');
    expect(currentSk('DIARY#0000000018#batch-12-18')).toBe('DIARY#0000000018#batch-12-18');
  });
});
