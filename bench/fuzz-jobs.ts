/** Fuzz targets of the job queue (reflector function) and the idle queue (idle function). */
import fc from 'fast-check';
import { IdleCheckSchema } from '../events/idle-check.js';
import { type Job, JobSchema } from '../events/job.js';
import type { SQSRecord } from 'aws-lambda';
import { jobRecordHandler } from '../functions/reflector/job-record-handler.js';
import type { ReflectorDeps } from '../functions/reflector/reflector-deps.js';
import { sqsEvent } from '../infra/local/lambda-events.js';
import type { BatchLog } from '../lib/batches/batch-log.js';
import { HARD_CAPS, type ItemCategory } from '../lib/batches/batch-answer.js';
import { defaultSignalConfig } from '../lib/signals/signal-weights.js';
import { defaultSleepTimeConfig } from '../lib/sleep-time/config.js';
import { DEFAULT_SUMMARY_PROMPT } from '../lib/summaries/summary.js';
import { reflectOffline, summarizeOffline } from '../lib/offline-model/rule-reflector.js';
import { nightlyOffline, weeklyOffline } from '../lib/offline-model/rule-sleep-time.js';
import { BatchNotRecordedError } from '../lib/batches/batch-log.port.js';
import type { LanguageModel } from '../lib/model/language-model.port.js';
import { parseSignalState } from '../lib/signals/signal-state.js';
import { checkIdle } from '../lib/signals/check-idle.js';
import { parseOrKeep } from '../lib/kernel/parse-or-keep.js';
import type { ForgetDeps } from '../lib/forget/forget-user.js';
import type { ReflectionDeps } from '../lib/batches/reflection-deps.js';
import type { SleepTimeDeps } from '../lib/sleep-time/run-sleep-time.js';
import type { SummaryDeps } from '../lib/summaries/run-summary.js';
import { fixedClock, RecordingLog } from '../lib/kernel/runtime.fake.js';
import { MemoryErasureLog } from '../lib/forget/forget.fake.js';
import { MemorySettings } from '../lib/settings/user-settings.fake.js';
import { ScriptedModel } from '../lib/model/language-model.fake.js';
import { MemorySummarySource } from '../lib/summaries/summary.fake.js';
import {
  ATTACKER,
  brief,
  edgeNumber,
  hostileString,
  hostileValue,
  injectionTexts,
  type Mutated,
  mutate,
} from '../test/helpers/hostile-input.js';
import type { RecordingWorld } from '../test/helpers/recording-world.js';
import {
  count,
  type FuzzOptions,
  type FuzzTarget,
  guarded,
  NOW,
  range,
  rejectionProblems,
  storageProblems,
  world,
} from './fuzz-world.js';

function offlineModel(): ScriptedModel {
  return new ScriptedModel(
    (req) =>
      req.toolName === 'record_nightly_findings'
        ? nightlyOffline(req.prompt)
        : req.toolName === 'record_weekly_reflection'
          ? weeklyOffline(req.prompt)
          : reflectOffline(req.prompt),
    (req) => summarizeOffline(req.system),
  );
}

/** The reflector's job dispatcher's dependencies (lib/jobs/run-job.ts) over the recording fakes. */
export function reflectorDeps(w: RecordingWorld, model: LanguageModel): ReflectorDeps {
  const clock = fixedClock(NOW);
  const log = new RecordingLog();
  const reflection: ReflectionDeps = {
    audit: w.audit,
    turns: w.turns,
    signalState: w.signalState,
    knowledge: w.knowledge,
    batchLogs: w.batchLogs,
    sources: w.sources,
    graph: w.graph,
    costs: w.costs,
    diary: w.diary,
    model,
    clock,
    log,
    settings: { temperature: 0.6, maxTokens: 1500, budgetTokens: 4000 },
    sleep: async () => {},
  };
  const summary: SummaryDeps = {
    turns: w.turns,
    summaries: w.summaries,
    settings: new MemorySettings(),
    costs: w.costs,
    model,
    clock,
    log,
    defaults: { enabled: true, prompt: DEFAULT_SUMMARY_PROMPT, maxTokens: 2000 },
    temperature: 0.6,
    budgetTokens: 4000,
  };
  const sleepTime: SleepTimeDeps = {
    turns: w.turns,
    knowledge: w.knowledge,
    runs: w.runs,
    summaries: new MemorySummarySource(),
    graph: w.graph,
    costs: w.costs,
    items: w.items,
    model,
    clock,
    log,
    config: defaultSleepTimeConfig,
  };
  const forget = (): ForgetDeps => {
    throw new Error('the fuzzer runs no forget jobs');
  };
  return {
    reflection,
    summary,
    sleepTime,
    forgets: w.forgets,
    erasures: new MemoryErasureLog(),
    forget,
    search: w.search,
    log,
  };
}

/**
 * Run one job-queue record through the reflector's own record handler
 * (functions/reflector/job-record-handler.ts): parse or keep, dispatch by kind
 * (lib/jobs/run-job.ts), retries. The record is the job's second delivery: an unusable
 * model answer then aborts the batch (with its reasons) instead of asking again. The outcome
 * is `<family>:<status>`, or `rejected`; a batch the handler gives back to the queue because
 * it could not be recorded is `batch:not_recorded` (designed, not a crash).
 */
export async function runJobRecord(w: RecordingWorld, body: string, deps: ReflectorDeps): Promise<string> {
  const handle = jobRecordHandler(deps, {
    rejected: w.rejected,
    redelivery: { after: async () => {} },
    metrics: { rejectedRecords: () => {}, modelCost: () => {} },
    log: deps.log,
    clock: fixedClock(NOW),
    maxReceives: 5,
    modelRetryDelaySeconds: 30,
  });
  const [delivered] = sqsEvent([{ body, groupId: ATTACKER }]).Records;
  if (!delivered) throw new Error('no record');
  const record: SQSRecord = {
    ...delivered,
    messageId: 'r1',
    attributes: { ...delivered.attributes, ApproximateReceiveCount: '2' },
  };
  try {
    const outcome = await handle(record);
    return outcome ? `${outcome.family}:${outcome.status}` : 'rejected';
  } catch (error) {
    if (error instanceof BatchNotRecordedError) return 'batch:not_recorded';
    throw error;
  }
}

/** A batch or event job is recorded as pending in the user's signal state by the ingestion that cut it: do what it would have. */
export async function recordPending(w: RecordingWorld, job: Job): Promise<void> {
  if (job.kind !== 'batch' && job.kind !== 'event') return;
  const stored = await w.signalState.load(job.userId);
  const { state } = parseSignalState(stored.raw);
  if (state.pendingBatches.some((p) => p.jobId === job.jobId)) return;
  state.pendingBatches.push({ jobId: job.jobId, turnIds: job.turnIds, since: NOW, episodeIds: job.episodeIds ?? [] });
  await w.signalState.save(job.userId, state, stored.version);
}

/** The caps of req R-LLM-3 on one batch log: staged items per category and in all. */
export function capProblems(log: BatchLog): string[] {
  if (log.status !== 'completed') return log.error?.message ? [] : ['an aborted batch log gives no reason'];
  const out: string[] = [];
  const byFolder: Record<string, ItemCategory> = {
    Facts: 'new_facts',
    Concepts: 'new_facts',
    Patterns: 'new_facts',
    Corrections: 'corrections',
    Connections: 'connections',
    Questions: 'open_questions',
  };
  const n: Record<ItemCategory, number> = { new_facts: 0, corrections: 0, connections: 0, open_questions: 0 };
  for (const f of [...log.staged_files, ...log.reinforced.map((r) => r.staged_file)]) {
    const folder = f.split('/')[1] ?? '';
    const cat = byFolder[folder];
    if (!cat) out.push(`staged file in an unknown folder: ${f}`);
    else n[cat] += 1;
  }
  for (const cat of Object.keys(HARD_CAPS) as ItemCategory[])
    if (n[cat] > HARD_CAPS[cat]) out.push(`${n[cat]} ${cat} staged, over the cap of ${HARD_CAPS[cat]}`);
  if (log.quality_gate_results.items_proposed > Object.values(HARD_CAPS).reduce((a, b) => a + b, 0))
    out.push(`${log.quality_gate_results.items_proposed} items proposed after the caps`);
  return out;
}

/** The turns of a job's user: hostile strings, injection texts and plain ones. */
const jobTexts = (o: FuzzOptions) => {
  const small = { ...o, maxBytes: Math.min(o.maxBytes ?? 3 << 20, 64 * 1024) };
  return (n: number) =>
    fc.array(
      fc.oneof(
        { weight: 2, arbitrary: hostileString(small) },
        { weight: 2, arbitrary: fc.constantFrom(...injectionTexts()) },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            'I keep a reef tank with clownfish.',
            'Actually, I meant the 40 gallon tank.',
            'Why is the water cloudy?',
          ),
        },
      ),
      { minLength: n, maxLength: n },
    );
};

/** A job of every kind but the forget, one field changed, through the reflector's record handler. */
function jobTarget(o: FuzzOptions): FuzzTarget<{ job: Mutated; texts: string[] }> {
  const small = { ...o, maxBytes: Math.min(o.maxBytes ?? 3 << 20, 64 * 1024) };
  const turnIdsArb = fc.oneof(
    fc.array(fc.oneof(edgeNumber, fc.integer({ min: 1, max: 20 })), { maxLength: 30 }),
    fc.constant(range(1001)),
    hostileValue(small),
  );
  const arbitrary = fc
    .record({
      kind: fc.constantFrom('batch', 'idle-summary', 'session-close', 'nightly', 'weekly', 'manual', 'event'),
      n: fc.integer({ min: 1, max: 12 }),
    })
    .chain(({ kind, n }) =>
      fc.record({
        job: mutate(
          {
            type: 'reflector.job',
            version: 1,
            jobId: `${kind}-1-${n}`,
            userId: ATTACKER,
            kind,
            trigger: 'turn_count',
            urgency: 2.5,
            turnIds: range(n),
            requestedAt: NOW,
          },
          { ...o, nested: { turnIds: turnIdsArb } },
        ),
        texts: jobTexts(o)(n),
      }),
    );
  return {
    name: 'reflector.job',
    weight: 2,
    arbitrary,
    run: async ({ job: m, texts: t }) => {
      const failures: string[] = [];
      const outcomes: Record<string, number> = {};
      const { world: w, victimBefore } = await world(t);
      const body = JSON.stringify(m.value) ?? 'null';
      let userId: string | null = null;
      await guarded(failures, 'reflector record', async () => {
        const parsed = JobSchema.safeParse(m.value);
        if (parsed.success) {
          userId = parsed.data.userId;
          // Every other valid job is one its ingestion recorded; the rest test a job nobody recorded.
          if (parsed.data.turnIds.length % 2 === 0) await recordPending(w, parsed.data);
        }
        const outcome = await runJobRecord(w, body, reflectorDeps(w, offlineModel()));
        count(outcomes, outcome);
        if (outcome === 'rejected')
          for (const kept of w.rejected.kept) failures.push(...rejectionProblems(kept.errors, kept.body, [m]));
      });
      failures.push(...storageProblems(w, new Set(userId ? [userId] : []), victimBefore));
      for (const log of w.batchLogs.logs.values()) failures.push(...capProblems(log));
      return { failures, outcomes };
    },
  };
}

/** An idle check, one field changed: parse or keep, then checkIdle (as the idle function does). */
function idleCheckTarget(o: FuzzOptions): FuzzTarget<{ check: Mutated; texts: string[] }> {
  const arbitrary = fc.record({ n: fc.integer({ min: 1, max: 9 }) }).chain(({ n }) =>
    fc.record({
      check: mutate({ type: 'idle.check', version: 1, userId: ATTACKER, lastTurnId: n, enqueuedAt: NOW }, o),
      texts: jobTexts(o)(n),
    }),
  );
  return {
    name: 'idle.check',
    weight: 1,
    arbitrary,
    run: async ({ check: m, texts: t }) => {
      const failures: string[] = [];
      const outcomes: Record<string, number> = {};
      const { world: w, victimBefore } = await world(t);
      const body = JSON.stringify(m.value) ?? 'null';
      let userId: string | null = null;
      await guarded(failures, 'idle record', async () => {
        const check = await parseOrKeep({ messageId: 'i1', body }, IdleCheckSchema, {
          rejected: w.rejected,
          clock: fixedClock(NOW),
          source: 'idle-queue',
        });
        if (!check) {
          count(outcomes, 'rejected');
          for (const kept of w.rejected.kept) failures.push(...rejectionProblems(kept.errors, kept.body, [m]));
          return;
        }
        userId = check.userId;
        const out = await checkIdle(check, {
          signalState: w.signalState,
          jobs: w.jobs,
          idle: w.idle,
          settings: w.settings,
          clock: fixedClock('2026-02-06T15:00:00.000Z'),
          log: new RecordingLog(),
          config: defaultSignalConfig,
        });
        count(outcomes, out.status === 'skipped' ? `skipped:${out.reason}` : out.status);
      });
      failures.push(...storageProblems(w, new Set(userId ? [userId] : []), victimBefore));
      for (const job of w.jobs.jobs) {
        const parsed = JobSchema.safeParse(job);
        if (!parsed.success)
          failures.push(`an enqueued job does not parse on the job queue: ${brief(parsed.error.issues)}`);
      }
      return { failures, outcomes };
    },
  };
}

export function queueJobTargets(o: FuzzOptions): FuzzTarget[] {
  return [jobTarget(o), idleCheckTarget(o)] as FuzzTarget[];
}
