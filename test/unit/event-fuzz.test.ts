/**
 * Hostile input against every event schema, queue record path and memory API route, in
 * process (bench/fuzz-targets.ts; `npx tsx bench/fuzz.ts` runs the same targets with 10,000
 * cases). Per case: no use case throws, every rejection names its field, every write stays
 * under the user's own prefix (or rejected/), no DynamoDB item passes 400 KB, the victim's
 * memory is untouched, the model's caps hold. The checks themselves are tested first, so a
 * green run cannot come from checks that never fail.
 */
import { describe, expect, it } from 'vitest';
import { type FuzzTarget, fuzzTargets, runTarget } from '../../bench/fuzz-targets.js';
import { capSummaryText, MAX_SUMMARY_CHARS } from '../../lib/domain/summary.js';
import { parseReflectionOutput, ReflectionOutputError } from '../../lib/domain/reflection-output.js';
import { ATTACKER, everyErrorNamesAField, keyStaysUnder, namesField, REQUEST_ROOTS, VICTIM } from '../helpers/hostile-input.js';
import { WriteLog } from '../helpers/recording-fakes.js';

const SEED = 20_261_122;
/** Cases per target: enough to meet every generator branch, few enough for 2 cores. */
const CASES: Record<string, number> = { 'turn.saved': 400, 'turn.saved claim-check': 200, 'session.closed': 150, 'agent.event': 150, 'reflection.job': 300, 'idle.check': 150, 'sweep (schedule event)': 150, 'prompt injection (in process)': 400 };
const API_CASES = 60;

const targets = await fuzzTargets({ maxBytes: 512 * 1024 });
const byName = (name: string): FuzzTarget => {
  const t = targets.find((x) => x.name === name);
  if (!t) throw new Error(`no fuzz target ${name}`);
  return t;
};

describe('the checks the fuzzing relies on', () => {
  it('keyStaysUnder refuses keys that leave the prefix however they are read', () => {
    expect(keyStaysUnder('users/u/Knowledge/Facts/x.md', 'users/u/')).toBe(true);
    expect(keyStaysUnder('users/u/reflections/../system.md', 'users/u/')).toBe(true);
    for (const bad of ['users/u/../v/x', 'users/u/Knowledge/../../v/x', 'users/u\\..\\..\\v\\x', 'users/v/x', 'users/u/', 'users/u/x\u0000', 'users/u/./../../x', '/users/u/x'])
      expect(keyStaysUnder(bad, 'users/u/'), bad).toBe(false);
  });

  it('namesField finds a field in an error path or quoted in its message', () => {
    expect(namesField([{ path: 'signals.quality', message: 'too big' }], 'signals')).toBe(true);
    expect(namesField([{ path: 'payloadRef:query', message: 'missing' }], 'query')).toBe(true);
    expect(namesField([{ path: '(root)', message: 'Unrecognized key: "admin"' }], 'admin')).toBe(true);
    expect(namesField([{ path: 'query', message: 'missing' }], 'response')).toBe(false);
  });

  it('everyErrorNamesAField flags a rejection of an object that only blames the whole of it', () => {
    expect(everyErrorNamesAField([{ path: '(root)', message: 'Invalid input' }], true)).toHaveLength(1);
    expect(everyErrorNamesAField([{ path: '(root)', message: 'Invalid input' }], false)).toEqual([]);
    expect(everyErrorNamesAField([{ path: 'body', message: 'Unrecognized key: "x"' }], true, REQUEST_ROOTS)).toEqual([]);
    expect(everyErrorNamesAField([], true)).toEqual(['a rejection with no errors']);
  });

  it('the write log flags other users, escaping keys, foreign partitions and items over 400 KB', () => {
    const log = new WriteLog();
    log.add('a', ATTACKER, `users/${ATTACKER}/Knowledge/x.md`);
    log.add('b', null, 'rejected/2026-02-06/turn-queue/m1.json');
    expect(log.problems(new Set([ATTACKER]))).toEqual([]);
    log.add('c', VICTIM, `users/${VICTIM}/x`);
    log.add('d', ATTACKER, `users/${ATTACKER}/Knowledge_staging/../../${VICTIM}/x`);
    log.add('e', ATTACKER, `USER#${VICTIM}|TURN#1`);
    log.addItem('f', ATTACKER, `USER#${ATTACKER}|REFLECTION#x`, { text: 'x'.repeat(410 * 1024) });
    log.add('g', null, 'rejected/../users/x');
    expect(log.problems(new Set([ATTACKER])).map((p) => p.split(':')[0])).toEqual(['c', 'd', 'e', 'f', 'g']);
  });
});

describe('fixes the fuzzing led to', () => {
  it('a model answer nested too deeply to serialise aborts the batch with a reason instead of throwing a RangeError', () => {
    const deep = JSON.parse(`${'['.repeat(50_000)}1${']'.repeat(50_000)}`);
    expect(() => parseReflectionOutput({ new_facts: deep })).toThrow(ReflectionOutputError);
  });

  it('a summary is cut at its cap, never in the middle of a surrogate pair', () => {
    expect(capSummaryText('short')).toBe('short');
    const cut = capSummaryText('😀'.repeat(MAX_SUMMARY_CHARS));
    expect(cut.length).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
    expect(cut).toMatch(/cap\]$/);
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(cut)).toBe(false);
  });
});

describe('hostile input (fast-check)', () => {
  const expectClean = async (target: FuzzTarget, cases: number, seed: number) => {
    const r = await runTarget(target, cases, seed);
    expect(r.examples).toEqual([]);
    expect(r.failures).toBe(0);
    expect(r.cases).toBe(cases);
    return r;
  };

  it('the turn queue: turn.saved, claim checks, session.closed and agent.event are accepted or rejected-and-kept, never thrown', { timeout: 60_000 }, async () => {
    for (const name of ['turn.saved', 'turn.saved claim-check', 'session.closed', 'agent.event']) {
      const r = await expectClean(byName(name), CASES[name] ?? 50, SEED);
      // Not vacuous: both valid and rejected records went through.
      expect(r.outcomes.rejected ?? 0, name).toBeGreaterThan(0);
      expect((r.outcomes.accepted ?? 0) + (r.outcomes.controlEvents ?? 0), name).toBeGreaterThan(0);
    }
  });

  it('the reflection and idle queues: jobs and checks run or are rejected-and-kept', { timeout: 60_000 }, async () => {
    const jobs = await expectClean(byName('reflection.job'), CASES['reflection.job'] ?? 50, SEED + 1);
    expect(jobs.outcomes.rejected ?? 0).toBeGreaterThan(0);
    expect(Object.keys(jobs.outcomes).filter((k) => k !== 'rejected').length).toBeGreaterThan(2);
    const idle = await expectClean(byName('idle.check'), CASES['idle.check'] ?? 50, SEED + 2);
    expect(idle.outcomes.rejected ?? 0).toBeGreaterThan(0);
    expect(Object.keys(idle.outcomes).length).toBeGreaterThan(1);
  });

  it('schedule events: a bad one is refused naming its field; a good one sweeps', { timeout: 60_000 }, async () => {
    const r = await expectClean(byName('sweep (schedule event)'), CASES['sweep (schedule event)'] ?? 50, SEED + 3);
    expect(r.outcomes.rejected ?? 0).toBeGreaterThan(0);
    expect(Object.keys(r.outcomes).length).toBeGreaterThan(2);
  });

  it('every memory API route: no 500, 400s name the field, nothing for another user, answers match the contract', { timeout: 60_000 }, async () => {
    const api = targets.filter((t) => t.name.startsWith('api '));
    expect(api.length).toBe(19);
    const statuses: Record<string, number> = {};
    for (const [i, t] of api.entries()) {
      const r = await expectClean(t, API_CASES, SEED + 10 + i);
      for (const [k, v] of Object.entries(r.outcomes)) statuses[k] = (statuses[k] ?? 0) + v;
    }
    for (const status of ['200', '400', '403', '404']) expect(statuses[status] ?? 0, status).toBeGreaterThan(0);
  });

  it('prompt injection: an obedient model writes nothing outside the user’s prefix and its output stays capped', { timeout: 60_000 }, async () => {
    const r = await expectClean(byName('prompt injection (in process)'), CASES['prompt injection (in process)'] ?? 50, SEED + 4);
    for (const k of ['batch:completed', 'batch:aborted', 'summary:written', 'nightly:completed']) expect(r.outcomes[k] ?? 0, k).toBeGreaterThan(0);
  });
});
