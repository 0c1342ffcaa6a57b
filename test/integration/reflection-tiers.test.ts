/**
 * Req R-TIER-11 and R-CAND-3 on the real handlers: a LoCoMo conversation replayed with no API
 * write feeds the user's short-term tier through reflection; the same conversation with one
 * session's turns validated FAIL stages, promotes and remembers nothing from that session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnSaved } from '../../events/turn-saved.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { locomoToTurns } from '../../infra/local/locomo.js';
import type { MemoryItem } from '../../lib/items/memory-item.js';
import { readLocomo } from '../helpers/locomo.js';

let stack: LocalHarness;
beforeAll(async () => {
  stack = await startHarness({ stage: 'reflecttiers', logLevel: 'SILENT', speed: 300 });
});
afterAll(async () => {
  await stack?.stop();
});

const SOURCE = 'locomo/conv-30';
/** The session the second user's agent failed in: any session would do; this one is not the first. */
const FAILED_SESSION = `${SOURCE}-session-2`;

type Row = Record<string, unknown>;
const ofUser = (rows: readonly Row[], userId: string, prefix: string) =>
  rows.filter((r) => r.pk === `USER#${userId}` && String(r.sk).startsWith(prefix));
const entriesOf = (rows: readonly Row[], userId: string) =>
  ofUser(rows, userId, 'MEM#').map((r) => r.item as MemoryItem);
/** Every turn a staged record (staged, promoted or discarded) or a tier entry of the user cites. */
const citedTurns = (rows: readonly Row[], userId: string) => ({
  staged: ofUser(rows, userId, 'STAGED#').flatMap((r) => (r.sourceTurns as number[] | undefined) ?? []),
  tiers: entriesOf(rows, userId).flatMap((i) => i.sourceTurns),
});

describe('reflection feeds the tiers, from successful turns only', () => {
  it('replays conv-30: short-term entries with reasons and source turns; a FAIL session leaves nothing', async () => {
    const conv = readLocomo('conv-30.json');
    const plain = locomoToTurns(conv, { userId: 'reflect-plain', source: SOURCE });
    const failing = locomoToTurns(conv, { userId: 'reflect-failing', source: SOURCE }).map(
      (t): TurnSaved => (t.sessionId === FAILED_SESSION ? { ...t, signals: { validation: 'FAIL' } } : t),
    );
    const failedTurns = new Set(failing.filter((t) => t.sessionId === FAILED_SESSION).map((t) => t.turnId));
    expect(failedTurns.size).toBeGreaterThan(0);
    const replay = await stack.replayLines([...plain, ...failing].map((t) => JSON.stringify(t)));
    expect(replay.refused).toEqual([]);
    await stack.waitUntilDrained();
    const report = await stack.report();
    expect(report).toMatchObject({ errors: 0, iamDenied: 0 });
    expect(report.tierEntries).toBeGreaterThan(0);

    const rows = await stack.scanItems();
    // (a) No API write: every entry was written by reflection, with why and from which turns.
    const entries = entriesOf(rows, 'reflect-plain');
    const shortTerm = entries.filter((i) => i.tier === 'short_term');
    expect(shortTerm.length).toBeGreaterThan(0);
    const turnIds = new Set(plain.map((t) => t.turnId));
    for (const e of entries) {
      expect(e.reason).toMatch(/^(new fact|correction|connection|open question) (staged by|recurred in) batch \S+/);
      expect(e.sourceTurns.length).toBeGreaterThan(0);
      for (const t of e.sourceTurns) expect(turnIds.has(t)).toBe(true);
      expect(e.sessionId).toMatch(new RegExp(`^${SOURCE}-session-\\d+$`));
    }
    // The same conversation, successful, did learn from that session: the check below can fail.
    const learned = citedTurns(rows, 'reflect-plain');
    expect(learned.staged.some((t) => failedTurns.has(t))).toBe(true);
    expect(learned.tiers.some((t) => failedTurns.has(t))).toBe(true);

    // (b) Its failed session's turns feed nothing: no staged (or promoted) item, no tier entry cites one.
    const failed = citedTurns(rows, 'reflect-failing');
    expect(failed.staged.filter((t) => failedTurns.has(t))).toEqual([]);
    expect(failed.tiers.filter((t) => failedTurns.has(t))).toEqual([]);
    expect(entriesOf(rows, 'reflect-failing').filter((e) => e.sessionId === FAILED_SESSION)).toEqual([]);
    // The other sessions are still mined, and the batches that met the FAIL turns say why they rejected items.
    expect(failed.staged.length).toBeGreaterThan(0);
    const logs = ofUser(rows, 'reflect-failing', 'BATCH#');
    expect(logs.length).toBeGreaterThan(0);
  }, 600_000);
});
