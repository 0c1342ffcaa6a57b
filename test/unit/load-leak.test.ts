/**
 * The load bench's leak check — the heap used after GC over the rounds
 * after the emulators settle, against a bound per turn published.
 */
import { describe, expect, it } from 'vitest';
import { LEAK_BOUND_BYTES_PER_TURN, leakCheck, SETTLE_ROUNDS } from '../../bench/load.js';

const settling = Array.from({ length: SETTLE_ROUNDS }, (_, i) => 40 + i * 2);

describe('the load bench leak check', () => {
  it('holds when the heap is flat after the settling rounds, whatever it did before', () => {
    const check = leakCheck([...settling, 50.1, 50.0, 50.2, 50.1], 2000);
    expect(check).toMatchObject({
      rounds: [SETTLE_ROUNDS + 1, SETTLE_ROUNDS + 2, SETTLE_ROUNDS + 3, SETTLE_ROUNDS + 4],
      held: true,
    });
    expect(check?.boundMBPerRound).toBeCloseTo((LEAK_BOUND_BYTES_PER_TURN * 2000) / 1024 / 1024, 2);
  });

  it('fails when something is kept per turn: 200 bytes a turn over 2,000-turn rounds', () => {
    const perRound = (200 * 2000) / 1024 / 1024;
    const check = leakCheck([...settling, 50, 50 + perRound, 50 + 2 * perRound, 50 + 3 * perRound], 2000);
    expect(check?.held).toBe(false);
    expect(check?.slopeMBPerRound).toBeCloseTo(perRound, 1);
  });

  it('is not run without three rounds after the settling ones', () => {
    expect(leakCheck([...settling, 50, 50], 2000)).toBeNull();
  });
});
