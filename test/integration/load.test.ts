/**
 * Load (req R-TIER-10): 100 concurrent sessions publish interleaved turns, a share of
 * them twice, against the real handlers on the emulators; every turn is stored exactly
 * once and nothing reaches a dead-letter queue. The full-size run, with heap before and
 * after each round, is `tsx bench/load.ts` (heap numbers are reported there, not asserted
 * here: a heap bound tight enough to mean something is too noisy for a test).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type LatencyProbe,
  latencyProbe,
  readLocomoTexts,
  type RoundResult,
  runLoadRound,
  type TurnTexts,
} from '../../bench/load.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';

let stack: LocalHarness;
let texts: TurnTexts;
let probe: LatencyProbe;

beforeAll(async () => {
  texts = readLocomoTexts();
  probe = latencyProbe();
  stack = await startHarness({ stage: 'load', logLevel: 'SILENT', speed: 300, observe: probe.observe });
});
afterAll(async () => {
  await stack?.stop();
});

describe('load: 100 concurrent sessions on the local harness', () => {
  let result: RoundResult;

  it('stores every turn exactly once, counts each republish as a duplicate, and leaves the DLQs empty', async () => {
    // 100 sessions over 80 users (20 users with two sessions at once), 4 turns each, 10 % republished.
    result = await runLoadRound(
      stack,
      texts,
      { sessions: 100, turns: 4, prefix: 'load', seed: 8, drainTimeoutMs: 90_000 },
      { probe },
    );
    expect(result.problems).toEqual([]);
    expect(result).toMatchObject({
      sessions: 100,
      users: 80,
      sharedUsers: 20,
      turnsPublished: 400,
      turnsStored: 400,
      lost: 0,
      doubled: 0,
    });
    expect(result.counted + result.late).toBe(400);
    expect(result.republished).toBeGreaterThan(0);
    expect(result.sqsDuplicates).toBeGreaterThan(0);
    expect(result.duplicatesCounted).toBe(result.republished);
    expect({
      dlq: result.dlq,
      handlerErrors: result.handlerErrors,
      rejected: result.rejected,
      publishFailures: result.publishFailures,
    }).toEqual({
      dlq: 0,
      handlerErrors: 0,
      rejected: 0,
      publishFailures: 0,
    });
    expect(result.signalLatencyMs.samples).toBe(400);
  }, 120_000);
});
