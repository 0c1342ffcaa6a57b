/**
 * Property-based fuzzing of every event schema, every queue's record path and every memory
 * API route, in process, against the use cases with recording fakes ("Hostile
 * input"). Each target generates hostile cases (test/helpers/hostile-input.ts) and checks,
 * per case:
 *
 * - nothing throws out of the record handler's use case (a rejection is a result);
 * - every rejection names its field (the zod issue path, or a message quoting the key), and
 *   a valid event with one field changed, when rejected, names that field;
 * - every write stays in the store of a user the case may touch, under `users/{user}/`
 *   (S3) or `USER#{user}` (DynamoDB) — `rejected/` for the shared rejected-events log — and
 *   no DynamoDB item exceeds 400 KB; the victim's memory is unchanged;
 * - per target: caps of the model's output hold, jobs a producer enqueues parse on the
 *   consumer side, API answers match the contract and never carry the victim's words.
 *
 * The api and reflector functions run their own dispatchers over the fakes: the api
 * function's routes (functions/api/routes.ts: routing, parsing, base64 bodies, 401, 403,
 * 400, error statuses) with HTTP API events as API Gateway builds them, the reflector's
 * record handler (functions/reflector/create-handler.ts → lib/jobs/run-job.ts) with SQS
 * records. The other record paths follow their handlers (functions/*): the signal function
 * is ingestTurns, the idle function is parseOrKeep + checkIdle, the sweep function is
 * SweepInputSchema + its sweep. test/integration/prompt-injection runs the Lambda handlers
 * against the local harness.
 *
 * The targets live by group: bench/fuzz-turn-queue.ts, bench/fuzz-jobs.ts, bench/fuzz-sweep.ts,
 * bench/fuzz-api.ts and bench/fuzz-injection.ts, over the world of bench/fuzz-world.ts.
 */
import fc from 'fast-check';
import { type Route, routes } from '../functions/api/contract.js';
import { brief } from '../test/helpers/hostile-input.js';
import { type CaseResult, count, type FuzzOptions, type FuzzTarget } from './fuzz-world.js';
import { turnQueueTargets } from './fuzz-turn-queue.js';
import { queueJobTargets } from './fuzz-jobs.js';
import { sweepInputSchema, sweepTarget } from './fuzz-sweep.js';
import { apiTarget } from './fuzz-api.js';
import { injectionTarget } from './fuzz-injection.js';

export async function fuzzTargets(o: FuzzOptions = {}): Promise<FuzzTarget[]> {
  const apiRoutes = (routes as readonly Route[]).filter((r) => r.access !== 'public');
  return [
    ...turnQueueTargets(o),
    ...queueJobTargets(o),
    sweepTarget(await sweepInputSchema(), o),
    ...apiRoutes.map((r) => apiTarget(r, o) as FuzzTarget),
    injectionTarget(o) as FuzzTarget,
  ];
}

export interface TargetReport {
  cases: number;
  failures: number;
  outcomes: Record<string, number>;
  /** The first few failures, each with the case's seed and path for `fc.check` replay. */
  examples: string[];
  ms: number;
}

/** Runs `cases` cases of one target; counts every failing case instead of stopping at the first. */
export async function runTarget(target: FuzzTarget, cases: number, seed: number): Promise<TargetReport> {
  const report: TargetReport = { cases: 0, failures: 0, outcomes: {}, examples: [], ms: 0 };
  const started = performance.now();
  const fail = (what: string, input: unknown) => {
    report.failures += 1;
    if (report.examples.length < 5) report.examples.push(`${what} — input ${brief(input, 300)}`);
  };
  const out = await fc.check(
    fc.asyncProperty(target.arbitrary, async (input) => {
      report.cases += 1;
      let r: CaseResult;
      try {
        r = await target.run(input);
      } catch (error) {
        fail(
          `the case itself threw: ${(error as Error)?.stack?.split('\n').slice(0, 4).join(' < ') ?? String(error)}`,
          input,
        );
        return true;
      }
      for (const [k, v] of Object.entries(r.outcomes)) count(report.outcomes, k, v);
      if (r.failures.length > 0) fail(r.failures.slice(0, 3).join(' | '), input);
      return true;
    }),
    { numRuns: cases, seed, endOnFailure: true },
  );
  // Only a generator that throws gets here: the property itself never fails.
  if (out.failed) fail(`fast-check stopped: ${brief(String(out.errorInstance ?? ''), 300)}`, out.counterexample);
  report.ms = Math.round(performance.now() - started);
  return report;
}
