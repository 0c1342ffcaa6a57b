/** The fuzz target of the schedules (sweep function). */
import fc from 'fast-check';
import type { z } from 'zod';
import { JobSchema } from '../events/job.js';
import { defaultSleepTimeConfig } from '../lib/sleep-time/config.js';
import { expirySweep, nightlySweep, type SweepDeps, weeklySweep } from '../lib/jobs/sweeps.js';
import { RecordingLog } from '../lib/kernel/runtime.fake.js';
import { MemoryActivity } from '../lib/signals/signal-state.fake.js';
import {
  ATTACKER,
  brief,
  everyErrorNamesAField,
  isPlainObject,
  type Mutated,
  mutate,
  namesField,
  VICTIM,
} from '../test/helpers/hostile-input.js';
import type { RecordingWorld } from '../test/helpers/recording-world.js';
import {
  type CaseResult,
  count,
  type FuzzOptions,
  type FuzzTarget,
  guarded,
  NOW,
  storageProblems,
  TURN_TIME,
  world,
} from './fuzz-world.js';

type SweepSchema = z.ZodType<{ sweep: 'nightly' | 'weekly' | 'expiry'; time?: string | undefined }>;

/** The sweep function's input schema, imported from the handler (which reads its settings at import). */
export async function sweepInputSchema(): Promise<SweepSchema> {
  const dummy = {
    TABLE_NAME: 'fuzz-table',
    BUCKET_NAME: 'fuzz-bucket',
    JOB_QUEUE_URL: 'https://sqs.invalid/fuzz',
    AWS_REGION: 'us-east-1',
  };
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(dummy)) {
    saved[k] = process.env[k];
    process.env[k] ??= v;
  }
  try {
    return (await import('../functions/sweep/create-handler.js')).SweepInputSchema as unknown as SweepSchema;
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
  }
}

/** A schedule's event: a valid sweep input with one field changed, a whole scheduled event, or any JSON. */
function sweepEvent(o: FuzzOptions): fc.Arbitrary<Mutated> {
  const times = fc.oneof(
    fc.constantFrom(
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:59:59Z',
      '9999-12-31T23:59:59-12:00',
      '1970-01-01T00:00:00Z',
      '2026-02-29T03:00:00Z',
      '2028-02-29T03:00:00Z',
      '2026-03-29T01:30:00+01:00',
      '2026-02-07T03:00:00.123456789Z',
    ),
    fc
      .date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
      .map((d) => d.toISOString()),
  );
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .record({ sweep: fc.constantFrom('nightly', 'weekly', 'expiry'), time: times })
        .chain((valid) => mutate(valid, o)),
    },
    // What EventBridge would send if a rule's input transformer were lost: the whole scheduled event.
    {
      weight: 1,
      arbitrary: fc.constant({
        value: {
          version: '0',
          id: 'x',
          'detail-type': 'Scheduled Event',
          source: 'aws.events',
          time: TURN_TIME,
          region: 'us-east-1',
          resources: [],
          detail: {},
        },
        kind: 'replace' as const,
        field: 'sweep',
      }),
    },
    {
      weight: 1,
      arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({ value, kind: 'replace' as const, field: '' })),
    },
  );
}

/** Parse the event as the sweep function does and, if it parses, run its sweep; `failures` and `outcomes` get what happened. */
async function sweepOnce(
  schema: SweepSchema,
  m: Mutated,
  c: { w: RecordingWorld; activity: MemoryActivity; failures: string[]; outcomes: Record<string, number> },
): Promise<void> {
  const { w, activity, failures, outcomes } = c;
  const parsed = schema.safeParse(m.value);
  if (!parsed.success) {
    count(outcomes, 'rejected');
    const errors = parsed.error.issues.map((i) => ({
      path: i.path.length > 0 ? i.path.map(String).join('.') : '(root)',
      message: i.message,
    }));
    failures.push(...everyErrorNamesAField(errors, isPlainObject(m.value)));
    if (m.field !== '' && m.kind !== 'add' && !namesField(errors, m.field))
      failures.push(`${m.kind} of ${m.field} rejected without naming it: ${brief(errors)}`);
    return;
  }
  const now = parsed.data.time ? new Date(parsed.data.time) : new Date(NOW);
  if (!Number.isFinite(now.getTime())) failures.push(`accepted a time that is no date: ${parsed.data.time}`);
  // The attacker was active the day before the schedule's time, so the sweeps have someone to select.
  activity.users.push({
    userId: ATTACKER,
    activity: { [new Date(now.getTime() - 3_600_000).toISOString().slice(0, 10)]: 20 },
  });
  const deps: SweepDeps = {
    activity,
    runs: w.runs,
    turns: w.turns,
    jobs: w.jobs,
    knowledge: w.knowledge,
    expiryLog: w.expiryLog,
    items: w.items,
    config: defaultSleepTimeConfig,
    log: new RecordingLog(),
  };
  const sweep = { nightly: nightlySweep, weekly: weeklySweep, expiry: expirySweep }[parsed.data.sweep];
  const result = await sweep(now, deps);
  count(outcomes, `${parsed.data.sweep}:${result.jobs.length > 0 ? 'jobs' : 'none'}`);
}

/** One schedule event through the sweep function's schema and sweep, with every property checked. */
async function runSweep(schema: SweepSchema, m: Mutated): Promise<CaseResult> {
  const failures: string[] = [];
  const outcomes: Record<string, number> = {};
  const { world: w, victimBefore } = await world(['I keep a reef tank.', 'It has clownfish.', 'And a goby.']);
  const activity = new MemoryActivity();
  await guarded(failures, 'sweep', () => sweepOnce(schema, m, { w, activity, failures, outcomes }));
  failures.push(...storageProblems(w, new Set([ATTACKER, VICTIM]), victimBefore));
  for (const job of w.jobs.jobs) {
    const parsed = JobSchema.safeParse(job);
    if (!parsed.success)
      failures.push(`the sweep enqueued a job the reflector would reject: ${brief(parsed.error.issues)}`);
  }
  return { failures, outcomes };
}

export function sweepTarget(schema: SweepSchema, o: FuzzOptions): FuzzTarget {
  return {
    name: 'sweep (schedule event)',
    weight: 1,
    arbitrary: sweepEvent(o),
    run: (m: Mutated) => runSweep(schema, m),
  } as FuzzTarget;
}
