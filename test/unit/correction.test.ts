/**
 * Corrections applied to the Knowledge they target: the text changes, the
 * confidence follows the hint, the earlier version is kept, and every change can be undone.
 */
import { describe, expect, it } from 'vitest';
import { applyCorrection, hintedConfidence, revertLatest } from '../../lib/knowledge/correction.js';
import type { KnowledgeDoc } from '../../lib/knowledge/knowledge.js';

const tank: KnowledgeDoc = {
  id: 'Facts/reef_tank.md',
  title: 'reef tank',
  text: 'The reef tank holds 20 gallons.',
  summary: 'The reef tank holds 20 gallons.',
  category: 'Facts',
  confidence: 0.6,
  sourceTurns: [3],
  promotedAt: '2026-01-01T00:00:00.000Z',
  prunedAt: '2026-01-20T00:00:00.000Z',
};
const by = 'Knowledge_staging/Corrections/correction-of-reef_tank--batch-4-9.md';
const at = '2026-02-01T10:00:00.000Z';

describe('applyCorrection', () => {
  it('replaces the text, moves the confidence by the hint, keeps the version before and counts as a verification', () => {
    const corrected = applyCorrection(tank, {
      by,
      text: 'The reef tank holds 40 gallons, not 20.',
      hint: 'higher',
      at,
    });
    expect(corrected).toMatchObject({
      text: 'The reef tank holds 40 gallons, not 20.',
      summary: 'The reef tank holds 40 gallons, not 20.',
      confidence: 0.7,
      baseConfidence: 0.7,
      verifiedAt: at,
    });
    expect(corrected.prunedAt).toBeUndefined();
    expect(corrected.history).toEqual([{ at, change: 'correction', by, text: tank.text, confidence: 0.6 }]);
  });

  it('applies one correction once: a redelivery or a second reviewer changes nothing', () => {
    const once = applyCorrection(tank, { by, text: 'The reef tank holds 40 gallons.', hint: 'lower', at });
    expect(
      applyCorrection(once, {
        by,
        text: 'The reef tank holds 40 gallons.',
        hint: 'lower',
        at: '2026-02-02T00:00:00.000Z',
      }),
    ).toBe(once);
  });

  it('keeps confidence within bounds', () => {
    expect(hintedConfidence(0.9, 'higher')).toBe(0.95);
    expect(hintedConfidence(0.15, 'lower')).toBe(0.1);
    expect(hintedConfidence(0.42, 'same')).toBe(0.42);
  });
});

describe('revertLatest', () => {
  it('undoes the latest change, and the undo is itself a change that can be undone', () => {
    const corrected = applyCorrection(tank, { by, text: 'The reef tank holds 40 gallons.', hint: 'lower', at });
    const reverted = revertLatest(corrected, 'reviewer-1', '2026-02-03T00:00:00.000Z', 'the user was joking');
    expect(reverted).toMatchObject({ text: tank.text, confidence: 0.6 });
    expect(reverted?.history?.map((h) => [h.change, h.by, h.text])).toEqual([
      ['correction', by, tank.text],
      ['revert', 'reviewer-1', 'The reef tank holds 40 gallons.'],
    ]);
    expect(reverted?.history?.at(-1)?.reason).toBe('the user was joking');
    const redone = revertLatest(reverted as KnowledgeDoc, 'reviewer-2', '2026-02-04T00:00:00.000Z');
    expect(redone).toMatchObject({ text: 'The reef tank holds 40 gallons.', confidence: 0.5 });
    expect(revertLatest(tank, 'reviewer-1', at)).toBeNull();
  });
});
