/**
 * Under faults the memory loses nothing and doubles nothing. The sample
 * conversation replayed on fresh stacks — fault-free twice, and with 10 % of AWS and model
 * calls failing and invocations dying part-way — ends in the same canonical state
 * (infra/local/state-dump.ts). LoCoMo scale: `npm run bench`.
 */
import { describe, expect, it } from 'vitest';
import { checkEquivalence } from '../../infra/local/fault-equivalence.js';

describe('fault equivalence (sample conversation, four replays in child processes)', () => {
  it('gives the same state fault-free twice, with 10 % faults and with the model throttled for 10 minutes, nothing left in a DLQ', async () => {
    const report = await checkEquivalence({ rate: 0.1, seed: 7, sustainedMinutes: 10 });
    expect(report.turns).toBe(30);
    expect(report.records).toBeGreaterThan(50);
    expect(report.determinism.sample).toEqual([]);
    expect(report.equivalence.sample).toEqual([]);
    expect(report.equivalence.differences).toBe(0);
    expect(report.dlq).toBe(0);
    // The faulty replay did meet faults (so the comparison is not vacuous) and retried them.
    expect(report.faults.throttling + report.faults['server-error']).toBeGreaterThan(0);
    expect(report.faults['timeout-after-send']).toBeGreaterThan(0);
    expect(report.handlerErrors).toBeGreaterThan(0);
    // Sustained mode: every model call refused for 10 simulated minutes; the SDK's
    // retries and the queue's redeliveries outlast it.
    expect(report.sustained?.sample).toEqual([]);
    expect(report.sustained?.differences).toBe(0);
    expect(report.sustained?.dlq).toBe(0);
    expect(report.sustained?.throttled).toBeGreaterThan(4);
  }, 480_000);
});
