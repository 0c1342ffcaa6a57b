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
 * against the local stack.
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import fc from 'fast-check';
import type { z } from 'zod';
import { IdleCheckSchema } from '../events/idle-check.js';
import { type Job, JobSchema } from '../events/job.js';
import type { APIGatewayProxyEventV2, SQSRecord } from 'aws-lambda';
import { type Route, routes } from '../functions/api/contract.js';
import { type ApiDispatch, apiRoutes } from '../functions/api/routes.js';
import { jobRecordHandler, type ReflectorDeps } from '../functions/reflector/create-handler.js';
import { lambdaContext } from '../infra/local/lambda-context.js';
import { httpApiEvent, sqsEvent } from '../infra/local/lambda-events.js';
import { S3ClaimCheckStore } from '../lib/turns/s3-claim-check-store.adapter.js';
import type { BatchLog } from '../lib/batches/batch-log.js';
import { HARD_CAPS, type ItemCategory } from '../lib/batches/reflection-output.js';
import { defaultSignalConfig } from '../lib/signals/signal-weights.js';
import { defaultSleepTimeConfig } from '../lib/sleep-time/config.js';
import { DEFAULT_SUMMARY_PROMPT, summaryPair } from '../lib/summaries/summary.js';
import { newTierItem } from '../lib/tiers/memory-tiers.js';
import { nightlyOffline, reflectOffline, summarizeOffline, weeklyOffline } from '../lib/offline-model/rule-reflector.js';
import { BatchNotRecordedError } from '../lib/batches/batch-log.port.js';
import type { ClaimCheckStore } from '../lib/turns/turn.port.js';
import type { LanguageModel } from '../lib/model/language-model.port.js';
import { parseSignalState } from '../lib/signals/signal-accumulator.js';
import { checkIdle } from '../lib/signals/check-idle.js';
import { type IngestDeps, type IngestRecord, ingestTurns } from '../lib/turns/ingest-turns.js';
import * as api from '../lib/memory-api/memory-api.js';
import { type FieldError, parseOrKeep } from '../lib/kernel/parse-or-keep.js';
import type { ForgetDeps } from '../lib/forget/forget-user.js';
import type { ReflectionDeps } from '../lib/batches/run-reflection.js';
import type { SleepTimeDeps } from '../lib/sleep-time/run-sleep-time.js';
import type { SummaryDeps } from '../lib/summaries/run-summary.js';
import { expirySweep, nightlySweep, type SweepDeps, weeklySweep } from '../lib/jobs/sweeps.js';
import { fixedClock, RecordingLog } from '../lib/kernel/runtime.fake.js';
import { MemoryActivity } from '../lib/signals/signal-state.fake.js';
import { MemoryErasureLog, RecordingItemEraser } from '../lib/forget/forget.fake.js';
import { MemorySettings } from '../lib/settings/user-settings.fake.js';
import { ScriptedModel } from '../lib/model/language-model.fake.js';
import { MemorySummarySource } from '../lib/summaries/summary.fake.js';
import { ATTACKER, arbitraryBody, brief, edgeNumber, everyErrorNamesAField, hostileString, hostileValue, injectionTexts, isPlainObject, type Mutated, mutate, namesField, oddUnicode, oversized, pathLike, REQUEST_ROOTS, tryJson, VICTIM } from '../test/helpers/hostile-input.js';
import { type RecordingWorld, recordingWorld } from '../test/helpers/recording-world.js';

/** A word only the victim's memory holds: no answer to the attacker may contain it. */
export const SECRET = 'quokkazebra';
const NOW = '2026-02-06T14:30:00.000Z';
const TURN_TIME = '2026-02-06T14:00:00Z';

export interface CaseResult {
  /** Every property the case broke, in words (empty when the case held). */
  failures: string[];
  /** What happened, counted by kind (accepted, rejected, 400, 403, aborted, …). */
  outcomes: Record<string, number>;
}

export interface FuzzTarget<T = unknown> {
  name: string;
  /** Share of the total cases this target gets. */
  weight: number;
  arbitrary: fc.Arbitrary<T>;
  run(input: T): Promise<CaseResult>;
}

export interface FuzzOptions {
  /** Largest oversized string a case may carry. @default 3 MiB */
  maxBytes?: number;
}

const count = (outcomes: Record<string, number>, key: string, n = 1) => {
  outcomes[key] = (outcomes[key] ?? 0) + n;
};

async function guarded(failures: string[], what: string, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    const e = error as Error;
    failures.push(`${what} threw ${e?.name ?? typeof error}: ${brief(e?.message ?? String(error), 300)} at ${(e?.stack ?? "").split("\n").slice(1, 4).join(" < ")}`);
  }
}

// ── The world a case runs in ───────────────────────────────────────────────────

const validTurn = (userId: string, turnId: number, query: string, extra: Record<string, unknown> = {}) => ({
  type: 'turn.saved',
  version: 1,
  userId,
  sessionId: 's-1',
  turnId,
  timestamp: TURN_TIME,
  query,
  response: 'Noted, thank you.',
  signals: { validation: 'APPROVE', quality: 0.9 },
  ...extra,
});

const ingestDepsOf = (world: RecordingWorld, claims: ClaimCheckStore = { fetch: async () => Promise.reject(Object.assign(new Error('no claims here'), { name: 'NoSuchKey' })) }): IngestDeps => ({
  turns: world.turns,
  signalState: world.signalState,
  jobs: world.jobs,
  idle: world.idle,
  claims,
  rejected: world.rejected,
  sources: world.sources,
  settings: world.settings,
  items: world.items,
  clock: fixedClock(NOW),
  log: new RecordingLog(),
  config: defaultSignalConfig,
  redaction: { personalData: false },
  source: 'turn-queue',
  forgets: { latest: async () => null },
});

const records = (bodies: readonly string[]): IngestRecord[] => bodies.map((body, i) => ({ messageId: `m${i}`, body }));

/** The victim's memory: turns, a Knowledge document, a staged item, a summary, an API item — all holding the secret. */
async function seedVictim(world: RecordingWorld): Promise<void> {
  const lines = [1, 2, 3].map((i) => JSON.stringify(validTurn(VICTIM, i, `My private password hint is ${SECRET} number ${i}; remember ${SECRET}.`, { attributes: { channel: 'web' } })));
  await ingestTurns(records(lines), ingestDepsOf(world));
  const doc = { id: 'Facts/secret.md', title: 'secret', text: `The password hint is ${SECRET}.`, category: 'Facts', confidence: 0.95, sourceTurns: [1], summary: SECRET, promotedAt: NOW };
  await world.knowledge.putKnowledge(VICTIM, [{ path: doc.id, markdown: `# secret\n\n${doc.text}`, doc }]);
  await world.knowledge.putStaged(
    VICTIM,
    [{ path: 'Facts/hint--batch-1-3.md', kind: 'fact', title: 'hint', category: 'Facts', confidence: 0.6, sourceTurns: [1], text: SECRET, meta: { staged_at: NOW }, body: SECRET, markdown: SECRET }],
    'batch-1-3',
  );
  await world.summaries.write(
    summaryPair({ userId: VICTIM, id: 'summary-1-3', kind: 'idle-summary', trigger: 'idle', createdAt: NOW, sourceTurns: [1, 2, 3], prompt: DEFAULT_SUMMARY_PROMPT, text: `Summary: ${SECRET}.`, modelId: 'm', inputTokens: 1, outputTokens: 1, deleted: false }),
  );
  await world.items.create({ ...newTierItem(VICTIM, 'long_term', { text: `Saved: ${SECRET}`, clientId: 'victim-1' }, new Date(NOW)), path: 'memory/long_term/x' });
}

/** Everything the fakes hold of the victim, as one string (compared before and after a case). */
function victimState(world: RecordingWorld): string {
  const mine = (k: string) => k.startsWith(`${VICTIM}/`) || k.startsWith(`${VICTIM}#`) || k.startsWith(`${VICTIM}\u0000`);
  const pick = <V>(m: ReadonlyMap<string, V>) => [...m.entries()].filter(([k]) => mine(k));
  return JSON.stringify([
    pick(world.turns.turns),
    world.signalState.items.get(VICTIM) ?? null,
    [...(world.knowledge.docsByUser.get(VICTIM)?.entries() ?? [])],
    pick(world.knowledge.staged),
    pick(world.knowledge.records),
    pick(world.knowledge.knowledgeFiles),
    pick(world.knowledge.outputs),
    pick(world.batchLogs.logs),
    pick(world.summaries.pairs),
    pick(world.items.items),
    world.audit.entries.filter((e) => e.userId === VICTIM),
    world.runs.runs.filter((r) => r.userId === VICTIM),
  ]);
}

/** The most attributes the turn.saved contract allows (50 entries of 4096 characters), different for every turn. */
export const largestAttributes = (turnId: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`attribute_${k}`, `${turnId}:${k}:`.padEnd(4096, 'x')]));

/** A fresh world holding the victim's memory and the attacker's turns; the write log starts empty. */
async function world(attackerTexts: readonly string[] = [], options: { largestAttributes?: boolean } = {}): Promise<{ world: RecordingWorld; victimBefore: string }> {
  const w = recordingWorld();
  await seedVictim(w);
  if (attackerTexts.length > 0) {
    const attributes = (t: string, turnId: number) => (options.largestAttributes ? largestAttributes(turnId) : { channel: 'web', hostile: t.slice(0, 4000) });
    const lines = attackerTexts.map((t, i) => JSON.stringify(validTurn(ATTACKER, i + 1, t.length > 0 ? t : 'empty', { attributes: attributes(t, i + 1) })));
    await ingestTurns(records(lines), ingestDepsOf(w));
  }
  w.writes.writes.length = 0;
  return { world: w, victimBefore: victimState(w) };
}

function storageProblems(w: RecordingWorld, allowed: ReadonlySet<string>, victimBefore: string): string[] {
  const out = w.writes.problems(allowed);
  if (!allowed.has(VICTIM) && victimState(w) !== victimBefore) out.push('the victim’s memory changed');
  return out;
}

const DISCRIMINATORS = new Set(['turn.saved', 'session.closed', 'agent.event']);

/**
 * Rejected records must name their fields; when a changed field made the record fail, that
 * field must be among them (any of `changes`: a claim check and the payload it points at
 * are changed independently).
 */
function rejectionProblems(errors: readonly FieldError[], body: string, changes: ReadonlyArray<Mutated | null>, where = ''): string[] {
  const out = everyErrorNamesAField(errors, isPlainObject(tryJson(body))).map((p) => `${where}${p}`);
  const known = changes.filter((m): m is Mutated => m !== null);
  if (known.length === 0 || known.length < changes.length) return out;
  if (known.every((m) => m.kind === 'valid')) return [...out, `${where}a valid value was rejected: ${brief(errors)}`];
  const named = known.filter((m) => m.kind !== 'valid' && m.kind !== 'add');
  // A turn turned into another event type fails on that type's own fields.
  const retyped = named.some((m) => {
    const type = isPlainObject(m.value) ? m.value.type : undefined;
    return m.field === 'type' && typeof type === 'string' && DISCRIMINATORS.has(type);
  });
  // A claim check without its payloadRef is read as a turn, and fails on the turn's own fields.
  const alsoNamed = (m: Mutated) => (m.field === 'payloadRef' && m.kind === 'remove' ? ['query', 'response'] : []);
  if (named.length > 0 && !retyped && !named.some((m) => [m.field, ...alsoNamed(m)].some((f) => namesField(errors, f)))) {
    out.push(`${where}${named.map((m) => `${m.kind} of ${JSON.stringify(m.field)}`).join(' and ')} rejected without naming it: ${brief(errors, 300)}`);
  }
  return out;
}

// ── Turn queue (signal function): turn.saved, claim checks, session.closed, agent.event ──

interface QueueCase {
  /** Each record's body and the changes made to get it (none: arbitrary input). */
  bodies: Array<{ body: string; mutation: Mutated | null; payload?: Mutated }>;
}

const asBody = (m: fc.Arbitrary<Mutated>): fc.Arbitrary<{ body: string; mutation: Mutated | null }> =>
  m.map((mutation) => ({ body: JSON.stringify(mutation.value) ?? 'null', mutation }));

/** A valid event's JSON with one field replaced by nesting deeper than JSON.stringify can go (but JSON.parse can). */
const deepTextBody = (valid: Record<string, unknown>): fc.Arbitrary<{ body: string; mutation: Mutated | null }> =>
  fc.record({ field: fc.constantFrom(...Object.keys(valid), 'extra'), depth: fc.integer({ min: 5_000, max: 100_000 }), array: fc.boolean() }).map(({ field, depth, array }) => ({
    body: `${JSON.stringify(valid).slice(0, -1)},${JSON.stringify(field)}:${array ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`}}`,
    mutation: { value: null, kind: field === 'extra' ? 'add' : 'replace', field },
  }));

function queueCase(valid: Record<string, unknown>, o: FuzzOptions & { fields?: string[]; nested?: Record<string, fc.Arbitrary<unknown>> }): fc.Arbitrary<QueueCase> {
  const one = fc.oneof(
    { weight: 12, arbitrary: asBody(mutate(valid, o)) },
    { weight: 2, arbitrary: arbitraryBody(o).map((body) => ({ body, mutation: null })) },
    { weight: 1, arbitrary: deepTextBody(valid) },
  );
  return fc.record({ bodies: fc.array(one, { minLength: 1, maxLength: 5 }) });
}

const signalsArb = (o: FuzzOptions) => mutate({ validation: 'APPROVE', quality: 0.9, route: 'answer', contradiction: false }, o).map((m) => m.value);
/** Sources (req R-SRC): valid ones, one field changed, and host names that are not. */
const sourcesArb = (o: FuzzOptions) =>
  fc.oneof(
    fc.array(mutate({ domain: 'docs.example.com', outcome: 'success', extractionQuality: 0.8 }, o).map((m) => m.value), { maxLength: 25 }),
    fc.array(fc.record({ domain: fc.oneof(pathLike(VICTIM), hostileString({ ...o, maxBytes: 0 }), fc.constantFrom('www.example.com', 'EXAMPLE.COM', 'a..b', '-x.example', `${'x'.repeat(64)}.com`)), outcome: fc.constantFrom('success', 'blocked', 'failed') }), { maxLength: 5 }),
  );
/** Episodes (req R-EPI): one field changed, hostile params and capability names. */
const episodeArb = (o: FuzzOptions) =>
  mutate(
    { goal: 'Order fish food', plan: ['search', 'order'], actions: [{ capability: 'shop.order', params: { qty: 1 }, result: 'ordered', confidence: 0.9, success: true }], outcome: { success: true, durationMs: 1200 } },
    { ...o, nested: { actions: fc.array(fc.record({ capability: fc.oneof(fc.constant('web.search'), pathLike(VICTIM), hostileString({ ...o, maxBytes: 0 })), params: hostileValue({ ...o, maxBytes: Math.min(o.maxBytes ?? 3 << 20, 128 * 1024) }) }), { maxLength: 4 }) } },
  ).map((m) => m.value);

const attributesArb = (o: FuzzOptions) =>
  fc.oneof(
    mutate({ channel: 'web', dia_ids: 'D1:1 D1:2' }, o).map((m) => m.value),
    fc.dictionary(hostileString({ ...o, maxBytes: 0 }), hostileString({ ...o, maxBytes: 0 }), { maxKeys: 60 }),
    // Up to the contract's limits (and one past them), in characters of one to three UTF-8 bytes.
    fc.record({ n: fc.integer({ min: 1, max: 51 }), unit: fc.constantFrom('v', 'é', '中', '😀') }).map(({ n, unit }) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, unit.repeat(4096 / unit.length)])),
    ),
  );

/** Runs a batch of TurnQueue records through ingestion and checks every property. */
async function runIngest(c: QueueCase, claims?: (w: RecordingWorld) => ClaimCheckStore & { reads?: string[] }): Promise<CaseResult> {
  const failures: string[] = [];
  const outcomes: Record<string, number> = {};
  const { world: w, victimBefore } = await world();
  const claimStore = claims?.(w);
  const deps = ingestDepsOf(w, claimStore);
  const bodies = c.bodies.map((b) => b.body);
  let r: Awaited<ReturnType<typeof ingestTurns>> | undefined;
  await guarded(failures, 'ingestTurns', async () => {
    r = await ingestTurns(records(bodies), deps);
  });
  if (r) {
    count(outcomes, 'records', bodies.length);
    count(outcomes, 'accepted', r.accepted);
    count(outcomes, 'duplicates', r.duplicates);
    count(outcomes, 'controlEvents', r.controlEvents);
    count(outcomes, 'rejected', r.rejected);
    if (r.failedMessageIds.length > 0) failures.push(`records went back to the queue (nothing here is transient): ${r.failedMessageIds.join(', ')}`);
    if (r.accepted + r.duplicates + r.late + r.controlEvents + r.alreadyApplied + r.rejected + r.failedMessageIds.length !== bodies.length) failures.push('records unaccounted for');
    if (w.rejected.kept.length !== r.rejected) failures.push(`${r.rejected} rejected but ${w.rejected.kept.length} kept`);
    for (const kept of w.rejected.kept) {
      const i = Number(kept.messageId.slice(1));
      if (kept.body !== bodies[i]) failures.push(`rejected record ${kept.messageId} was not kept as it came`);
      const b = c.bodies[i];
      failures.push(...rejectionProblems(kept.errors, kept.body, [b?.mutation ?? null, ...(b?.payload ? [b.payload] : [])], `${kept.messageId}: `));
    }
  }
  // Who the records speak for: writes for anybody else are out of bounds.
  const named = new Set(bodies.map((b) => tryJson(b)).filter(isPlainObject).map((v) => v.userId).filter((u): u is string => typeof u === 'string'));
  failures.push(...storageProblems(w, named, victimBefore));
  if (claimStore?.reads) for (const key of claimStore.reads) if (!key.startsWith('claims/')) failures.push(`a claim check read ${JSON.stringify(key)} outside claims/`);
  for (const job of w.jobs.jobs) {
    const parsed = JobSchema.safeParse(job);
    if (!parsed.success) failures.push(`an enqueued job does not parse on the job queue: ${brief(parsed.error.issues)}`);
  }
  return { failures, outcomes };
}

/** An S3 client that only answers GetObject, from a map, recording each key read. */
class ClaimBucket {
  readonly reads: string[] = [];
  constructor(readonly objects: Map<string, string>) {}
  async send(command: unknown): Promise<unknown> {
    if (!(command instanceof GetObjectCommand)) throw new Error(`unexpected S3 command ${(command as object)?.constructor?.name}`);
    const key = String(command.input.Key);
    this.reads.push(key);
    const body = this.objects.get(key);
    if (body === undefined) throw Object.assign(new Error(`NoSuchKey ${key}`), { name: 'NoSuchKey' });
    return { Body: { transformToString: async () => body } };
  }
}

const CLAIM_KEY = `claims/${ATTACKER}/0000000001-0123456789abcdef.json`;
const VICTIM_CLAIM_KEY = `claims/${VICTIM}/0000000001-fedcba9876543210.json`;

/** Timestamps the contract accepts at its edges: year 0, year 9999 (year 10000 in UTC), offsets, nanoseconds, leap days. */
export const edgeTimestamps = fc.constantFrom(
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00+14:00',
  '1970-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '9999-12-31T23:59:59-12:00',
  '2028-02-29T23:59:59.999999999+05:45',
  '2026-02-06T14:00:00.000001Z',
);

function turnQueueTargets(o: FuzzOptions): FuzzTarget[] {
  const turn = validTurn(ATTACKER, 1, 'Actually, I meant the 40 gallon reef tank.', {
    context: '## Plan\n1. Correct the tank size',
    signals: { validation: 'APPROVE', quality: 0.9, route: 'answer', contradiction: false },
    attributes: { channel: 'web' },
    sources: [{ domain: 'reefkeeping.example', outcome: 'success', extractionQuality: 0.8 }],
    episode: { goal: 'Correct the tank size', actions: [{ capability: 'memory.update', result: 'done' }], outcome: { success: true } },
  });
  const nested = { signals: signalsArb(o), attributes: attributesArb(o), timestamp: edgeTimestamps, sources: sourcesArb(o), episode: episodeArb(o) };
  const session = { type: 'session.closed', version: 1, userId: ATTACKER, sessionId: 's-1', timestamp: TURN_TIME, reason: 'user_left' };
  const agent = {
    type: 'agent.event', version: 1, userId: ATTACKER, sessionId: 's-1', timestamp: TURN_TIME, trigger: 'milestone', turnId: 1, detail: 'tank set up', attributes: { channel: 'web' },
    episode: { goal: 'Set up the tank', actions: [{ capability: 'shop.order', result: 'ordered' }], outcome: { success: true } },
  };
  const claim = { type: 'turn.saved', version: 1, userId: ATTACKER, sessionId: 's-1', turnId: 1, timestamp: TURN_TIME, payloadRef: { key: CLAIM_KEY, bytes: 300_000 } };
  const payloadRef = fc.oneof(
    mutate({ key: CLAIM_KEY, bytes: 300_000 }, o).map((m) => m.value),
    fc.record({ key: fc.oneof(pathLike(VICTIM), fc.constant(VICTIM_CLAIM_KEY), fc.constant(`users/${VICTIM}/turns/0000000001/x.md`)), bytes: fc.nat() }),
  );
  return [
    { name: 'turn.saved', weight: 3, arbitrary: queueCase(turn, { ...o, fields: ['context', 'signals', 'attributes', 'sources', 'episode'], nested }), run: (c: QueueCase) => runIngest(c) },
    {
      name: 'turn.saved claim-check',
      weight: 2,
      // The claim (one field changed) and the payload it points at (one field changed, often large).
      arbitrary: fc.record({
        claim: mutate(claim, { ...o, nested: { payloadRef } }),
        // Mostly the claimed turn as published, so the claim's own changes decide.
        payload: fc.oneof(
          { weight: 2, arbitrary: fc.constant<Mutated>({ value: { ...turn, response: 'r'.repeat(300_000) }, kind: 'valid', field: '' }) },
          { weight: 1, arbitrary: mutate({ ...turn, response: 'r'.repeat(300_000) }, { ...o, nested }) },
        ),
      }),
      run: ({ claim: cm, payload }: { claim: Mutated; payload: Mutated }) =>
        runIngest({ bodies: [{ body: JSON.stringify(cm.value) ?? 'null', mutation: cm, payload }] }, () => {
          const objects = new Map([
            [CLAIM_KEY, JSON.stringify(payload.value) ?? 'null'],
            [VICTIM_CLAIM_KEY, JSON.stringify(validTurn(VICTIM, 1, `victim's words ${SECRET}`))],
            [`users/${VICTIM}/turns/0000000001/x.md`, `---\nuser: ${VICTIM}\n---\n${SECRET}`],
          ]);
          const bucket = new ClaimBucket(objects);
          const store = new S3ClaimCheckStore(bucket as unknown as S3Client, 'bucket');
          return Object.assign(store, { reads: bucket.reads });
        }),
    },
    { name: 'session.closed', weight: 1, arbitrary: queueCase(session, { ...o, fields: ['reason'], nested: { timestamp: edgeTimestamps } }), run: (c: QueueCase) => runIngest(c) },
    { name: 'agent.event', weight: 1, arbitrary: queueCase(agent, { ...o, fields: ['sessionId', 'turnId', 'detail', 'attributes', 'episode'], nested: { attributes: attributesArb(o), timestamp: edgeTimestamps, episode: episodeArb(o) } }), run: (c: QueueCase) => runIngest(c) },
  ] as FuzzTarget[];
}

// ── Job queue (ReflectionQueue, reflector function) and idle queue (idle function) ──

function offlineModel(): ScriptedModel {
  return new ScriptedModel(
    (req) => (req.toolName === 'record_nightly_findings' ? nightlyOffline(req.prompt) : req.toolName === 'record_weekly_reflection' ? weeklyOffline(req.prompt) : reflectOffline(req.prompt)),
    (req) => summarizeOffline(req.system),
  );
}

/** The reflector's job dispatcher's dependencies (lib/jobs/run-job.ts) over the recording fakes. */
function reflectorDeps(w: RecordingWorld, model: LanguageModel): ReflectorDeps {
  const clock = fixedClock(NOW);
  const log = new RecordingLog();
  const reflection: ReflectionDeps = {
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
  const sleepTime: SleepTimeDeps = { turns: w.turns, knowledge: w.knowledge, runs: w.runs, summaries: new MemorySummarySource(), graph: w.graph, costs: w.costs, items: w.items, model, clock, log, config: defaultSleepTimeConfig };
  const forget = (): ForgetDeps => {
    throw new Error('the fuzzer runs no forget jobs');
  };
  return { reflection, summary, sleepTime, forgets: w.forgets, erasures: new MemoryErasureLog(), forget, search: w.search, log };
}

/**
 * Run one job-queue record through the reflector's own record handler
 * (functions/reflector/create-handler.ts): parse or keep, dispatch by kind
 * (lib/jobs/run-job.ts), retries. The record is the job's second delivery: an unusable
 * model answer then aborts the batch (with its reasons) instead of asking again. The outcome
 * is `<family>:<status>`, or `rejected`; a batch the handler gives back to the queue because
 * it could not be recorded is `batch:not_recorded` (designed, not a crash).
 */
async function runJobRecord(w: RecordingWorld, body: string, deps: ReflectorDeps): Promise<string> {
  const handle = jobRecordHandler(deps, { rejected: w.rejected, redelivery: { after: async () => {} }, metrics: { addMetric: () => {}, addModelCost: () => {} }, log: deps.log, clock: fixedClock(NOW), maxReceives: 5, modelRetryDelaySeconds: 30 });
  const [delivered] = sqsEvent([{ body, groupId: ATTACKER }]).Records;
  if (!delivered) throw new Error('no record');
  const record: SQSRecord = { ...delivered, messageId: 'r1', attributes: { ...delivered.attributes, ApproximateReceiveCount: '2' } };
  try {
    const outcome = await handle(record);
    return outcome ? `${outcome.family}:${outcome.status}` : 'rejected';
  } catch (error) {
    if (error instanceof BatchNotRecordedError) return 'batch:not_recorded';
    throw error;
  }
}

/** A batch or event job is recorded as pending in the user's signal state by the ingestion that cut it: do what it would have. */
async function recordPending(w: RecordingWorld, job: Job): Promise<void> {
  if (job.kind !== 'batch' && job.kind !== 'event') return;
  const stored = await w.signalState.load(job.userId);
  const { state } = parseSignalState(stored.raw);
  if (state.pendingBatches.some((p) => p.jobId === job.jobId)) return;
  state.pendingBatches.push({ jobId: job.jobId, turnIds: job.turnIds, since: NOW, episodeIds: job.episodeIds ?? [] });
  await w.signalState.save(job.userId, state, stored.version);
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** The caps of req R-LLM-3 on one batch log: staged items per category and in all. */
export function capProblems(log: BatchLog): string[] {
  if (log.status !== 'completed') return log.error?.message ? [] : ['an aborted batch log gives no reason'];
  const out: string[] = [];
  const byFolder: Record<string, ItemCategory> = { Facts: 'new_facts', Concepts: 'new_facts', Patterns: 'new_facts', Corrections: 'corrections', Connections: 'connections', Questions: 'open_questions' };
  const n: Record<ItemCategory, number> = { new_facts: 0, corrections: 0, connections: 0, open_questions: 0 };
  for (const f of [...log.staged_files, ...log.reinforced.map((r) => r.staged_file)]) {
    const folder = f.split('/')[1] ?? '';
    const cat = byFolder[folder];
    if (!cat) out.push(`staged file in an unknown folder: ${f}`);
    else n[cat] += 1;
  }
  for (const cat of Object.keys(HARD_CAPS) as ItemCategory[]) if (n[cat] > HARD_CAPS[cat]) out.push(`${n[cat]} ${cat} staged, over the cap of ${HARD_CAPS[cat]}`);
  if (log.quality_gate_results.items_proposed > Object.values(HARD_CAPS).reduce((a, b) => a + b, 0)) out.push(`${log.quality_gate_results.items_proposed} items proposed after the caps`);
  return out;
}

/** The turns of a job's user: hostile strings, injection texts and plain ones. */
const jobTexts = (o: FuzzOptions) => {
  const small = { ...o, maxBytes: Math.min(o.maxBytes ?? 3 << 20, 64 * 1024) };
  return (n: number) => fc.array(fc.oneof({ weight: 2, arbitrary: hostileString(small) }, { weight: 2, arbitrary: fc.constantFrom(...injectionTexts()) }, { weight: 1, arbitrary: fc.constantFrom('I keep a reef tank with clownfish.', 'Actually, I meant the 40 gallon tank.', 'Why is the water cloudy?') }), { minLength: n, maxLength: n });
};

/** A job of every kind but the forget, one field changed, through the reflector's record handler. */
function jobTarget(o: FuzzOptions): FuzzTarget<{ job: Mutated; texts: string[] }> {
  const small = { ...o, maxBytes: Math.min(o.maxBytes ?? 3 << 20, 64 * 1024) };
  const turnIdsArb = fc.oneof(fc.array(fc.oneof(edgeNumber, fc.integer({ min: 1, max: 20 })), { maxLength: 30 }), fc.constant(range(1001)), hostileValue(small));
  const arbitrary = fc
    .record({ kind: fc.constantFrom('batch', 'idle-summary', 'session-close', 'nightly', 'weekly', 'manual', 'event'), n: fc.integer({ min: 1, max: 12 }) })
    .chain(({ kind, n }) =>
      fc.record({
        job: mutate({ type: 'reflector.job', version: 1, jobId: `${kind}-1-${n}`, userId: ATTACKER, kind, trigger: 'turn_count', urgency: 2.5, turnIds: range(n), requestedAt: NOW }, { ...o, nested: { turnIds: turnIdsArb } }),
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
        if (outcome === 'rejected') for (const kept of w.rejected.kept) failures.push(...rejectionProblems(kept.errors, kept.body, [m]));
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
    fc.record({ check: mutate({ type: 'idle.check', version: 1, userId: ATTACKER, lastTurnId: n, enqueuedAt: NOW }, o), texts: jobTexts(o)(n) }),
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
        const check = await parseOrKeep({ messageId: 'i1', body }, IdleCheckSchema, { rejected: w.rejected, clock: fixedClock(NOW), source: 'idle-queue' });
        if (!check) {
          count(outcomes, 'rejected');
          for (const kept of w.rejected.kept) failures.push(...rejectionProblems(kept.errors, kept.body, [m]));
          return;
        }
        userId = check.userId;
        const out = await checkIdle(check, { signalState: w.signalState, jobs: w.jobs, idle: w.idle, settings: w.settings, clock: fixedClock('2026-02-06T15:00:00.000Z'), log: new RecordingLog(), config: defaultSignalConfig });
        count(outcomes, out.status === 'skipped' ? `skipped:${out.reason}` : out.status);
      });
      failures.push(...storageProblems(w, new Set(userId ? [userId] : []), victimBefore));
      for (const job of w.jobs.jobs) {
        const parsed = JobSchema.safeParse(job);
        if (!parsed.success) failures.push(`an enqueued job does not parse on the job queue: ${brief(parsed.error.issues)}`);
      }
      return { failures, outcomes };
    },
  };
}

function queueJobTargets(o: FuzzOptions): FuzzTarget[] {
  return [jobTarget(o), idleCheckTarget(o)] as FuzzTarget[];
}

// ── Schedules (sweep function) ─────────────────────────────────────────────────

type SweepSchema = z.ZodType<{ sweep: 'nightly' | 'weekly' | 'expiry'; time?: string | undefined }>;

/** The sweep function's input schema, imported from the handler (which reads its settings at import). */
async function sweepInputSchema(): Promise<SweepSchema> {
  const dummy = { TABLE_NAME: 'fuzz-table', BUCKET_NAME: 'fuzz-bucket', REFLECTION_QUEUE_URL: 'https://sqs.invalid/fuzz', AWS_REGION: 'us-east-1' };
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

function sweepTarget(schema: SweepSchema, o: FuzzOptions): FuzzTarget {
  const times = fc.oneof(
    fc.constantFrom('0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '9999-12-31T23:59:59-12:00', '1970-01-01T00:00:00Z', '2026-02-29T03:00:00Z', '2028-02-29T03:00:00Z', '2026-03-29T01:30:00+01:00', '2026-02-07T03:00:00.123456789Z'),
    fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  );
  const event = fc.oneof(
    { weight: 6, arbitrary: fc.record({ sweep: fc.constantFrom('nightly', 'weekly', 'expiry'), time: times }).chain((valid) => mutate(valid, o)) },
    // What EventBridge would send if a rule's input transformer were lost: the whole scheduled event.
    { weight: 1, arbitrary: fc.constant({ value: { version: '0', id: 'x', 'detail-type': 'Scheduled Event', source: 'aws.events', time: TURN_TIME, region: 'us-east-1', resources: [], detail: {} }, kind: 'replace' as const, field: 'sweep' }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({ value, kind: 'replace' as const, field: '' })) },
  );
  return {
    name: 'sweep (schedule event)',
    weight: 1,
    arbitrary: event,
    run: async (m: Mutated) => {
      const failures: string[] = [];
      const outcomes: Record<string, number> = {};
      const { world: w, victimBefore } = await world(['I keep a reef tank.', 'It has clownfish.', 'And a goby.']);
      const activity = new MemoryActivity();
      await guarded(failures, 'sweep', async () => {
        const parsed = schema.safeParse(m.value);
        if (!parsed.success) {
          count(outcomes, 'rejected');
          const errors = parsed.error.issues.map((i) => ({ path: i.path.length > 0 ? i.path.map(String).join('.') : '(root)', message: i.message }));
          failures.push(...everyErrorNamesAField(errors, isPlainObject(m.value)));
          if (m.field !== '' && m.kind !== 'add' && !namesField(errors, m.field)) failures.push(`${m.kind} of ${m.field} rejected without naming it: ${brief(errors)}`);
          return;
        }
        const now = parsed.data.time ? new Date(parsed.data.time) : new Date(NOW);
        if (!Number.isFinite(now.getTime())) failures.push(`accepted a time that is no date: ${parsed.data.time}`);
        // The attacker was active the day before the schedule's time, so the sweeps have someone to select.
        activity.users.push({ userId: ATTACKER, activity: { [new Date(now.getTime() - 3_600_000).toISOString().slice(0, 10)]: 20 } });
        const deps: SweepDeps = { activity, runs: w.runs, turns: w.turns, jobs: w.jobs, knowledge: w.knowledge, expiryLog: w.expiryLog, items: w.items, config: defaultSleepTimeConfig, log: new RecordingLog() };
        const sweep = { nightly: nightlySweep, weekly: weeklySweep, expiry: expirySweep }[parsed.data.sweep];
        const result = await sweep(now, deps);
        count(outcomes, `${parsed.data.sweep}:${result.jobs.length > 0 ? 'jobs' : 'none'}`);
      });
      failures.push(...storageProblems(w, new Set([ATTACKER, VICTIM]), victimBefore));
      for (const job of w.jobs.jobs) {
        const parsed = JobSchema.safeParse(job);
        if (!parsed.success) failures.push(`the sweep enqueued a job the reflector would reject: ${brief(parsed.error.issues)}`);
      }
      return { failures, outcomes };
    },
  };
}

// ── The memory API (api function) ──────────────────────────────────────────────

/** A request of an API case: path parameters as API Gateway passes them, the query, the body as sent. */
export interface ApiRequest {
  pathParameters: Record<string, string>;
  query: Record<string, string>;
  body: string | undefined;
}

/** The claims the JWT authorizer passes on for the attacker's token (a credential for the attacker only). */
const ATTACKER_CLAIMS = { sub: ATTACKER, memory_users: ATTACKER };

/** A path segment for routing: percent-encoded (a lone surrogate, which cannot be, stands as `x`). */
const segment = (v: string) => {
  try {
    return encodeURIComponent(v);
  } catch {
    return 'x';
  }
};

/**
 * The HTTP API event API Gateway would hand the api function for this request: the route's
 * path with the case's parameters, its path parameters as the case passes them, the body as
 * sent or base64-encoded (as API Gateway sends a binary body), the attacker's claims when
 * the case carries the bearer token.
 */
export function apiEventOf(route: Route, c: ApiCase, req: ReturnType<typeof apiRequestOf>): APIGatewayProxyEventV2 {
  let path = route.path;
  for (const [k, v] of Object.entries(req.rawParams)) path = path.replace(`{${k}}`, segment(v));
  // Text that is not well-formed UTF-16 would not survive the round trip through bytes: it goes as text.
  const base64 = c.base64 && req.body !== undefined && Buffer.from(req.body, 'utf8').toString('utf8') === req.body;
  const body = req.body !== undefined && base64 ? Buffer.from(req.body, 'utf8').toString('base64') : req.body;
  return httpApiEvent({
    method: route.method,
    path,
    query: req.query,
    pathParameters: req.pathParameters,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    ...(body !== undefined ? { body, isBase64Encoded: base64 } : {}),
    ...(c.bearer ? { claims: ATTACKER_CLAIMS } : {}),
    requestId: 'fuzz',
  });
}

/** The api function's dispatcher (functions/api/routes.ts) over the recording fakes; its log holds what it logged (a 500's error). */
function apiDispatchOf(w: RecordingWorld): { dispatch: ApiDispatch; log: RecordingLog } {
  const log = new RecordingLog();
  return { dispatch: apiRoutes(apiDeps(w), { log, redaction: { personalData: false } }), log };
}

/** The answer of the api function to this event: its status and JSON body (the body as text when it is not JSON). */
async function callApi(dispatch: ApiDispatch, event: APIGatewayProxyEventV2): Promise<{ status: number; body: unknown }> {
  const result = await dispatch(event, lambdaContext('fuzz-api', 29));
  if (typeof result === 'string') return { status: 200, body: tryJson(result) ?? result };
  const text = result.body ?? '';
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: checked as text
  }
  return { status: result.statusCode ?? 200, body };
}

/** Stands for the id of an item the caller owns (filled in once it exists). */
export const OWN_MEM = '$own-mem';
const apiDeps = (w: RecordingWorld): api.MemoryApiDeps => ({
  sources: w.sources,
  graph: w.graph,
  catalog: w.catalog,
  search: w.search,
  items: w.items,
  trust: w.trust,
  audit: w.audit,
  turns: w.turns,
  knowledge: w.knowledge,
  summaries: w.summaries,
  runs: w.runs,
  batchLogs: w.batchLogs,
  jobs: w.jobs,
  signalState: w.signalState,
  costs: w.costs,
  settings: w.settings,
  events: w.events,
  diary: w.diary,
  forgets: w.forgets,
  archives: w.archives,
  erasures: new MemoryErasureLog(),
  eraser: new RecordingItemEraser(),
  clock: fixedClock(NOW),
});

/** The attacker's own memory for API cases: turns, a staged item, a summary, API items. Returns the id of a long-term item. */
async function seedAttackerForApi(w: RecordingWorld): Promise<string> {
  // Turns with the largest attributes the contract allows: items derived from them carry them.
  await ingestTurns(records([1, 2, 3].map((i) => JSON.stringify(validTurn(ATTACKER, i, `I keep a reef tank with clownfish, note ${i}.`, { attributes: largestAttributes(i) })))), ingestDepsOf(w));
  await w.knowledge.putStaged(
    ATTACKER,
    [{ path: 'Facts/reef--batch-1-3.md', kind: 'fact', title: 'reef', category: 'Facts', confidence: 0.6, sourceTurns: [1], text: 'reef tank', meta: { staged_at: NOW }, body: 'reef tank', markdown: 'reef tank' }],
    'batch-1-3',
  );
  await w.summaries.write(
    summaryPair({ userId: ATTACKER, id: 'summary-1-3', kind: 'idle-summary', trigger: 'idle', createdAt: NOW, sourceTurns: [1, 2, 3], prompt: DEFAULT_SUMMARY_PROMPT, text: 'Reef tank talk.', modelId: 'm', inputTokens: 1, outputTokens: 1, deleted: false }),
  );
  const deps = apiDeps(w);
  const principal = { subject: ATTACKER, users: [ATTACKER], admin: false };
  await api.createTierEntry(deps, principal.subject, ATTACKER, 'short_term', { text: 'feeds fish at 8', type: 'preference', clientId: 'c-short' });
  const long = await api.createTierEntry(deps, principal.subject, ATTACKER, 'long_term', { text: 'the tank holds 40 gallons', clientId: 'c-long' });
  return long.item.id;
}

/** A valid sample of each route's body and query, for the attacker's own memory. */
const SAMPLES: Record<string, { body?: Record<string, unknown>; query?: Record<string, string>; params?: Record<string, string> }> = {
  memorySearch: { body: { query: 'reef tank', limit: 5, filters: { includeGlobal: true, kind: ['turn', 'memory'], minQuality: 0 }, minSimilarity: 0 } },
  memorySave: { body: { turnId: 1, sessionId: 's-1', validation: 'APPROVE', candidates: [{ text: 'likes clownfish', title: 'clownfish', type: 'preference', keywords: ['fish'], contentTypes: ['preference'], confidence: 0.8 }] } },
  memoryRetrieve: { body: { id: 'turn:1' } },
  tierCreate: { params: { tier: 'short_term' }, body: { text: 'water change on Sunday', type: 'task', sessionId: 's-1', sourceTurns: [1, 2, 3], ttlSeconds: 3600, clientId: 'c-1', confidence: 0.7 } },
  tierQuery: { params: { tier: 'long_term' }, query: { type: 'note', kind: 'memory', sessionId: 's-1', since: '2026-01-01T00:00:00Z', until: '2026-12-31T00:00:00Z', minConfidence: '0.1', limit: '10' } },
  tierDelete: { params: { tier: 'long_term', id: OWN_MEM } },
  itemPromote: { params: { id: OWN_MEM }, body: { reason: 'useful' } },
  itemDemote: { params: { id: OWN_MEM }, body: { reason: 'superseded', note: 'a newer one' } },
  itemContradict: { params: { id: OWN_MEM }, body: { evidence: 'turn:9', note: 'the user said otherwise' } },
  itemContradictUndo: { params: { id: OWN_MEM } },
  itemEdit: { params: { id: 'summary:summary-1-3' }, body: { text: 'The user keeps a reef tank.', reason: 'shorter' } },
  itemRestore: { params: { id: 'knowledge:Facts/reef_tank.md' }, body: { at: '2026-01-01T00:00:00.000Z', reason: 'the edit was wrong' } },
  memoryOutcomes: { body: { ids: [OWN_MEM, 'turn:1'], validation: 'APPROVE', turnId: 2 } },
  auditList: { query: { itemId: OWN_MEM, limit: '20' } },
  sleepTimeRuns: { query: { limit: '5' } },
  sleepTimeLatest: {},
  sleepTimeAssessment: { query: { days: '30' } },
  summaryList: { query: { includeDeleted: 'true' } },
  summaryRequest: { body: { prompt: 'Summarise the reef tank talk.', reflect: true } },
  summaryEdit: { params: { id: 'summary-1-3' }, body: { text: 'The user keeps a reef tank.', reason: 'shorter' } },
  summaryDelete: { params: { id: 'summary-1-3' } },
  diaryList: { query: { limit: '10', type: 'reflection', include: 'all' } },
  diaryOverride: { params: { id: 'batch-1-3' }, body: { decision: 'drop', reason: 'not about me' } },
  itemDelete: { params: { id: 'turn:2' }, query: { reason: 'not about me' } },
  // A turn nobody has: the real path, without erasing the replay that prompt-injection.ts fuzzes beside.
  memoryForget: { body: { turns: [9_999], dryRun: false, reason: 'not about me' } },
  reviewList: { query: { includeDecided: 'true' } },
  reviewPromote: { body: { path: 'Knowledge_staging/Facts/reef--batch-1-3.md', reason: 'looks right' } },
  reviewDiscard: { body: { path: 'Facts/reef--batch-1-3.md', reason: 'wrong' } },
  batchList: { query: { limit: '10' } },
  sourceReliability: { query: { domains: 'docs.example.com,WWW.Example.org' } },
  capabilityConfidence: {},
  graphNeighbours: { params: { entity: 'Reef Tank' }, query: { includePruned: 'true' } },
  graphEdgeCreate: { body: { from: 'reef tank', relation: 'contains', to: 'clownfish', note: 'said so' } },
  graphEdgeRestore: { body: { id: 'reef_tank|contain|clownfish' } },
  knowledgeRestore: { body: { path: 'Knowledge/Facts/reef_tank.md' } },
  knowledgeRevert: { body: { path: 'Knowledge/Facts/reef_tank.md', reason: 'the correction was wrong' } },
  summaryQuality: {},
  userCosts: { query: { days: '7' } },
  settingsRead: {},
  settingsChange: { body: { idleMinutes: 20, prompt: 'List the open questions.', maxTokens: null } },
  stageCosts: { query: { days: '7' } },
  reindex: {},
  graphEntitySplit: { params: { entity: 'clownfish' } },
  graphLog: { query: { limit: '20' } },
};

export interface ApiCase {
  userId: string;
  params: Mutated;
  query: Mutated;
  body: { text: string | undefined; mutation: Mutated | null };
  encode: boolean;
  /** The body goes base64-encoded (API Gateway's `isBase64Encoded`). */
  base64: boolean;
  /** The request carries the attacker's bearer token (else no claims reach the function: 401). */
  bearer: boolean;
}

/** Query strings are strings: replace, remove or add one parameter with a hostile string. */
const mutateQuery = (valid: Record<string, string>, o: FuzzOptions): fc.Arbitrary<Mutated> => {
  const small = { ...o, maxBytes: Math.min(o.maxBytes ?? 3 << 20, 16 * 1024) };
  const keys = Object.keys(valid);
  return fc.oneof(
    fc.constant({ value: { ...valid }, kind: 'valid' as const, field: '' }),
    ...(keys.length > 0
      ? [
          fc.record({ field: fc.constantFrom(...keys), v: fc.oneof(hostileString(small), edgeNumber.map(String)) }).map(({ field, v }) => ({ value: { ...valid, [field]: v }, kind: 'replace' as const, field })),
          fc.constantFrom(...keys).map((field) => {
            const copy: Record<string, string> = { ...valid };
            delete copy[field];
            return { value: copy, kind: 'remove' as const, field };
          }),
        ]
      : []),
    fc.record({ field: fc.constantFrom('userId', 'admin', '__proto__', 'x'), v: hostileString({ ...small, maxBytes: 0 }) }).map(({ field, v }) => ({ value: { ...valid, [field]: v }, kind: 'add' as const, field })),
  );
};

function apiCase(route: Route, o: FuzzOptions): fc.Arbitrary<ApiCase> {
  const sample = SAMPLES[route.operationId] ?? {};
  const paramFields = Object.keys(sample.params ?? {});
  const paramsArb: fc.Arbitrary<Mutated> =
    paramFields.length === 0
      ? fc.constant({ value: {}, kind: 'valid' as const, field: '' })
      : fc.oneof(
          { weight: 3, arbitrary: fc.constant({ value: { ...sample.params }, kind: 'valid' as const, field: '' }) },
          {
            weight: 2,
            arbitrary: fc.record({ field: fc.constantFrom(...paramFields), v: fc.oneof(pathLike(VICTIM), hostileString({ ...o, maxBytes: 0 }), fc.constantFrom('mem:0000', 'staged:Facts/reef--batch-1-3.md', 'summary:summary-1-3', 'knowledge:Facts/secret.md')) }).map(({ field, v }) => ({
              value: { ...sample.params, [field]: v },
              kind: 'replace' as const,
              field,
            })),
          },
        );
  const bodyArb: fc.Arbitrary<{ text: string | undefined; mutation: Mutated | null }> = sample.body
    ? fc.oneof(
        { weight: 8, arbitrary: mutate(sample.body, o).map((m) => ({ text: JSON.stringify(m.value) ?? 'null', mutation: m })) },
        { weight: 1, arbitrary: arbitraryBody({ ...o, maxBytes: 0 }).map((text) => ({ text, mutation: null })) },
        { weight: 1, arbitrary: fc.constant({ text: undefined, mutation: null }) },
      )
    : fc.oneof({ weight: 4, arbitrary: fc.constant({ text: undefined, mutation: null }) }, { weight: 1, arbitrary: arbitraryBody({ ...o, maxBytes: 0 }).map((text) => ({ text, mutation: null })) });
  return fc.record({
    userId: fc.oneof({ weight: 8, arbitrary: fc.constant(ATTACKER) }, { weight: 1, arbitrary: fc.constantFrom(VICTIM, 'GLOBAL', `${ATTACKER}/../${VICTIM}`) }, { weight: 1, arbitrary: fc.oneof(pathLike(VICTIM), hostileString({ ...o, maxBytes: 0 })) }),
    params: paramsArb,
    query: sample.query ? mutateQuery(sample.query, o) : fc.constant({ value: {}, kind: 'valid' as const, field: '' }),
    body: bodyArb,
    encode: fc.boolean(),
    base64: fc.boolean(),
    bearer: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  });
}

/** The request of an API case: path parameters as API Gateway passes them (percent-encoded unless `encode` is off), query, body. */
export function apiRequestOf(c: ApiCase, ownMem: string): ApiRequest & { rawParams: Record<string, string>; encodable: boolean } {
  const fill = (v: string) => v.replaceAll(OWN_MEM, ownMem);
  const rawParams: Record<string, string> = { userId: c.userId, ...Object.fromEntries(Object.entries(c.params.value as Record<string, unknown>).map(([k, v]) => [k, fill(String(v))])) };
  let encodable = true;
  // A lone surrogate cannot be percent-encoded: such a value travels as it is.
  const encode = (v: string) => {
    try {
      return encodeURIComponent(v);
    } catch {
      encodable = false;
      return v;
    }
  };
  const pathParameters = Object.fromEntries(Object.entries(rawParams).map(([k, v]) => [k, c.encode ? encode(v) : v]));
  const query = Object.fromEntries(Object.entries(c.query.value as Record<string, string>).map(([k, v]) => [k, fill(v)]));
  const body = c.body.text === undefined ? undefined : fill(c.body.text);
  return { pathParameters, query, body, rawParams, encodable };
}

/**
 * The properties of one API answer: never a 500; a 400 names the field (the one the case
 * changed, when it changed one); a 2xx only for the caller's own user (or GLOBAL, read);
 * an answer that matches the contract and never holds the victim's secret.
 */
export function apiAnswerProblems(route: Route, c: ApiCase, req: ReturnType<typeof apiRequestOf>, status: number, body: unknown, caller = ATTACKER): string[] {
  const failures: string[] = [];
  let decodedUser: string | undefined;
  try {
    decodedUser = decodeURIComponent(req.pathParameters.userId ?? '');
  } catch {
    decodedUser = undefined;
  }
  const fields = (body as { error?: { fields?: FieldError[] } } | null)?.error?.fields;
  if (status >= 500) failures.push(`${status}: ${brief(body, 300)}`);
  if (status === 400 && fields) {
    const where = fields[0]?.path.split('.')[0] ?? '';
    const input = where === 'body' ? tryJson(req.body ?? '') : where === 'query' ? req.query : req.rawParams;
    failures.push(...everyErrorNamesAField(fields, isPlainObject(input), REQUEST_ROOTS).map((p) => `400 ${p}`));
    const mutation = where === 'body' ? c.body.mutation : where === 'query' ? c.query : where === 'params' && c.params.kind !== 'valid' ? c.params : null;
    const userChanged = where === 'params' && c.userId !== caller;
    if (mutation && mutation.kind !== 'valid' && mutation.kind !== 'add' && !namesField(fields, mutation.field) && !(userChanged && namesField(fields, 'userId'))) {
      failures.push(`400 for a ${mutation.kind} of ${where}.${mutation.field} does not name it: ${brief(fields, 300)}`);
    }
    // A valid sample must pass where it is: a refusal of it is a contract bug.
    if (mutation && mutation.kind === 'valid' && where !== 'params') failures.push(`a valid ${where} was refused: ${brief(fields, 300)}`);
  }
  if (status >= 200 && status < 300) {
    if (decodedUser !== caller && !(decodedUser === 'GLOBAL' && route.access === 'read')) failures.push(`${status} for user ${JSON.stringify(decodedUser)} (the caller may act on ${caller} only)`);
    const shape = route.response.safeParse(body);
    if (!shape.success) failures.push(`the answer does not match the contract: ${brief(shape.error.issues, 300)}`);
  }
  let answer = '';
  try {
    answer = JSON.stringify(body) ?? '';
  } catch (error) {
    failures.push(`the answer cannot be serialised: ${(error as Error).message}`);
  }
  if (answer.includes(SECRET)) failures.push('the answer holds the victim’s secret');
  return failures;
}

/** Any route of the API with one of its cases. */
export const anyApiCase = (o: FuzzOptions = {}): fc.Arbitrary<{ route: Route; c: ApiCase }> =>
  fc.constantFrom(...(routes as readonly Route[]).filter((r) => r.access !== 'public')).chain((route) => apiCase(route, o).map((c) => ({ route, c })));

function apiTarget(route: Route, o: FuzzOptions): FuzzTarget<ApiCase> {
  return {
    name: `api ${route.method} ${route.path.replace('/v1/users/{userId}', '')}`,
    weight: 0.5,
    arbitrary: apiCase(route, o),
    run: async (c) => {
      const failures: string[] = [];
      const outcomes: Record<string, number> = {};
      const { world: w, victimBefore } = await world();
      const ownMem = await seedAttackerForApi(w);
      w.writes.writes.length = 0;
      const req = apiRequestOf(c, ownMem);
      const { dispatch, log } = apiDispatchOf(w);
      const event = apiEventOf(route, c, req);
      const res = await callApi(dispatch, event);
      count(outcomes, String(res.status));
      if (event.isBase64Encoded) count(outcomes, `base64 ${res.status}`);
      if (!c.bearer) {
        // No token reached the function (the authorizer would have refused it first): 401, and nothing written.
        if (res.status !== 401) failures.push(`${res.status} without a bearer token: ${brief(res.body, 300)}`);
        failures.push(...storageProblems(w, new Set(), victimBefore));
        return { failures, outcomes };
      }
      if (res.status === 500) failures.push(`500: ${brief((log.entries.find((e) => e.level === 'error')?.extra?.error as Error)?.stack ?? res.body, 400)}`);
      else failures.push(...apiAnswerProblems(route, c, req, res.status, res.body));
      failures.push(...storageProblems(w, new Set([ATTACKER]), victimBefore));
      return { failures, outcomes };
    },
  };
}

// ── Prompt injection, in process: the reflector's model obeys the attacker ──────

/** The first turn of every injection case: items citing turn 1 with these words pass the keyword gate. */
const REEF = 'I keep a reef tank with clownfish.';

const facts = (n: number, text: string) => ({
  new_facts: Array.from({ length: n }, (_, i) => ({ title: `reef_fact_${i}`, content: `${text} reef tank clownfish ${i}`, source_turns: [1], category: 'Facts' })),
  corrections: Array.from({ length: Math.min(n, 1000) }, () => ({ existing_file: 'Facts/reef.md', what_changed: 'reef tank is 40 gallons', source_turns: [1], new_confidence_hint: 'higher' })),
  open_questions: Array.from({ length: Math.min(n, 1000) }, (_, i) => ({ question: `reef tank clownfish question ${i}?`, source_turns: [1] })),
});

/** What an obedient model answers: paths out of the user's folder, other users' ids, huge and odd output. */
export function hostileModelOutput(o: FuzzOptions = {}): fc.Arbitrary<unknown> {
  const small = { ...o, maxBytes: 0 };
  const text = fc.oneof({ weight: 2, arbitrary: fc.constant('The user keeps a reef tank with clownfish.') }, { weight: 3, arbitrary: hostileString(small) }, { weight: 1, arbitrary: fc.constantFrom(...injectionTexts()) });
  const turns = fc.oneof(fc.constant([1]), fc.constant([1, 2]), fc.array(fc.oneof(edgeNumber, fc.integer({ min: -3, max: 30 })), { maxLength: 25 }));
  const path = fc.oneof(pathLike(VICTIM), fc.constantFrom('Facts/reef.md', 'Facts/secret.md', `../${VICTIM}/Knowledge/Facts/secret.md`));
  const fact = fc.record(
    { title: fc.oneof(text, path), content: text, source_turns: turns, related_existing: fc.array(path, { maxLength: 12 }), category: fc.oneof(fc.constantFrom('Facts', 'Concepts', 'Patterns'), path), userId: fc.constant(VICTIM), user_id: fc.constant(VICTIM), path },
    { requiredKeys: ['title', 'content', 'source_turns', 'category'] },
  );
  const correction = fc.record({ existing_file: path, what_changed: text, source_turns: turns, new_confidence_hint: fc.constantFrom('higher', 'lower', 'same') });
  const connection = fc.record({ file_a: path, file_b: path, relationship: text, source_turns: turns });
  const question = fc.record({ question: text, source_turns: turns, why_unresolved: text }, { requiredKeys: ['question', 'source_turns'] });
  // Obedient and well-formed: every item passes the schema and cites the turn it echoes,
  // so the gates and the code that names files are what stands between it and the bucket.
  const title = fc.oneof(
    fc.constantFrom(`../../../../users/${VICTIM}/Knowledge/Facts/pwned`, `users/${VICTIM}/Knowledge/Facts/pwned`, '/etc/passwd', '..', '.', `..\\..\\${VICTIM}`, `${VICTIM}/reef`),
    pathLike(VICTIM).filter((t) => t.length <= 120),
    oddUnicode.map((t) => t.slice(0, 120)).filter((t) => t.length > 0),
  );
  const echo = fc.oneof(fc.constant(REEF), hostileString(small).map((t) => `${REEF} ${t}`.slice(0, 2000)));
  const cites = fc.constantFrom([1], [1, 2], [1, 2, 3], range(5), range(20));
  const okPaths = fc.constantFrom<string[]>([], ['Facts/reef.md'], ['Knowledge/Facts/reef.md']);
  const obedient = fc.record({
    new_facts: fc.array(fc.record({ title, content: echo, source_turns: cites, related_existing: okPaths, category: fc.constantFrom('Facts', 'Concepts', 'Patterns') }), { minLength: 1, maxLength: 4 }),
    corrections: fc.array(fc.record({ existing_file: fc.constantFrom('Facts/reef.md', `../../${VICTIM}/Knowledge/Facts/secret.md`), what_changed: echo, source_turns: fc.constantFrom([1, 2], [1, 2, 3]), new_confidence_hint: fc.constantFrom('higher', 'lower', 'same') }), { maxLength: 2 }),
    connections: fc.array(fc.record({ file_a: fc.constant('Facts/reef.md'), file_b: fc.constantFrom('Facts/reef.md', `../${VICTIM}/Facts/x.md`), relationship: echo, source_turns: cites }), { maxLength: 2 }),
    open_questions: fc.array(fc.record({ question: fc.oneof(title, echo).map((q) => `${q} reef tank?`.slice(0, 1000)), source_turns: cites, why_unresolved: echo.map((t) => t.slice(0, 1000)) }), { maxLength: 3 }),
  });
  const structured = fc.record(
    { new_facts: fc.array(fact, { maxLength: 6 }), corrections: fc.array(correction, { maxLength: 3 }), connections: fc.array(connection, { maxLength: 3 }), open_questions: fc.array(question, { maxLength: 4 }), userId: fc.constant(VICTIM) },
    { requiredKeys: [] },
  );
  return fc.oneof(
    { weight: 6, arbitrary: obedient },
    { weight: 4, arbitrary: structured },
    { weight: 2, arbitrary: fc.integer({ min: 3, max: 30_000 }).map((n) => facts(n, 'many')) },
    { weight: 1, arbitrary: structured.map((s) => `Sure! Here is the reflection:\n\`\`\`json\n${JSON.stringify(s)}\n\`\`\`\nand {"new_facts": [{"title": "${VICTIM}"`) },
    { weight: 1, arbitrary: hostileString(o) },
    { weight: 1, arbitrary: oversized(200 * 1024, Math.max(200 * 1024, o.maxBytes ?? 3 << 20)).map((s) => ({ new_facts: [{ title: 'big', content: s, source_turns: [1], category: 'Facts' }] })) },
    { weight: 1, arbitrary: fc.integer({ min: 2_000, max: 10_000 }).map((depth) => ({ new_facts: JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`) })) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  );
}

const hostileFindings = (o: FuzzOptions) => {
  const small = { ...o, maxBytes: 0 };
  const finding = fc.record(
    {
      category: fc.oneof(fc.constantFrom('pattern', 'contradiction', 'correction', 'preference', 'relationship', 'unresolved'), hostileString(small)),
      confidence: fc.constantFrom('HIGH', 'MEDIUM', 'LOW'),
      statement: fc.oneof(fc.constant('The user keeps a reef tank with clownfish.'), hostileString(small), pathLike(VICTIM)),
      evidence_turns: fc.oneof(fc.constant([1, 2]), fc.array(fc.integer({ min: -1, max: 50 }), { maxLength: 60 })),
      subject: fc.constant(VICTIM),
      relationship: pathLike(VICTIM),
      object: fc.constant(`users/${VICTIM}/Knowledge/x.md`),
    },
    { requiredKeys: ['category', 'confidence', 'statement', 'evidence_turns'] },
  );
  const stored = fc.record({
    category: fc.constantFrom('pattern', 'contradiction', 'correction', 'relationship', 'unresolved'),
    confidence: fc.constantFrom('HIGH', 'MEDIUM'),
    statement: fc.oneof(pathLike(VICTIM), fc.constant(`../../../../users/${VICTIM}/Knowledge/pwned`), oddUnicode).map((t) => (t.length > 0 ? t.slice(0, 1000) : 'x')),
    evidence_turns: fc.constantFrom([1, 2], [1, 2, 3]),
    sides: fc.constant(['the tank holds 30 gallons (turn 1)', 'the tank holds 40 gallons (turn 2)']),
    wrong: fc.constant('30 gallons'),
    right: fc.constant('40 gallons'),
    subject: fc.oneof(fc.constant(`../../../users/${VICTIM}`), pathLike(VICTIM).map((t) => t.slice(0, 200))),
    relationship: fc.constant('owns'),
    object: fc.constant(`users/${VICTIM}/Knowledge/x.md`),
  });
  return fc.oneof(fc.record({ findings: fc.array(stored, { minLength: 1, maxLength: 10 }) }), fc.record({ findings: fc.array(finding, { maxLength: 40 }) }), fc.integer({ min: 31, max: 20_000 }).map((n) => ({ findings: Array.from({ length: n }, (_, i) => ({ category: 'pattern', confidence: 'HIGH', statement: `reef tank ${i}`, evidence_turns: [1, 2] })) })), hostileString(o));
};

const hostileWeekly = (o: FuzzOptions) =>
  fc.oneof(
    fc.record({ trajectory: hostileString({ ...o, maxBytes: 0 }), topic_drift: fc.array(fc.record({ topic: pathLike(VICTIM), status: fc.constantFrom('dropped', 'new', 'continuing') }), { maxLength: 25 }), weekly_patterns: fc.array(hostileString({ ...o, maxBytes: 0 }), { maxLength: 12 }), unresolved_arcs: fc.array(pathLike(VICTIM), { maxLength: 12 }) }),
    hostileString(o),
  );

export interface InjectionCase {
  use: 'batch' | 'nightly' | 'weekly' | 'summary';
  /** The attacker's turns carry the largest attributes the contract allows. */
  largest?: boolean;
  texts: string[];
  output: unknown;
  summary: string;
}

function injectionTarget(o: FuzzOptions): FuzzTarget<InjectionCase> {
  const texts = fc.array(fc.oneof(fc.constantFrom(...injectionTexts()), fc.constant(REEF)), { minLength: 3, maxLength: 10 }).map((t) => [REEF, REEF, ...t]);
  const twenty = fc.array(fc.oneof(fc.constantFrom(...injectionTexts()), fc.constant(REEF)), { minLength: 18, maxLength: 18 }).map((t) => [REEF, REEF, ...t]);
  const arbitrary = fc.oneof(
    { weight: 5, arbitrary: fc.record({ use: fc.constant('batch' as const), texts, output: hostileModelOutput(o), summary: fc.constant('') }) },
    // Twenty turns with the largest attributes, and items citing all of them.
    { weight: 1, arbitrary: fc.record({ use: fc.constant('batch' as const), largest: fc.constant(true), texts: twenty, output: hostileModelOutput(o), summary: fc.constant('') }) },
    { weight: 2, arbitrary: fc.record({ use: fc.constant('nightly' as const), texts, output: hostileFindings(o), summary: fc.constant('') }) },
    { weight: 1, arbitrary: fc.record({ use: fc.constant('weekly' as const), texts, output: hostileWeekly(o), summary: fc.constant('A summary.') }) },
    { weight: 2, arbitrary: fc.record({ use: fc.constant('summary' as const), texts, output: fc.constant(null), summary: fc.oneof(hostileString(o), fc.constantFrom(...injectionTexts()), oversized(100 * 1024, Math.max(100 * 1024, o.maxBytes ?? 3 << 20))) }) },
  );
  return {
    name: 'prompt injection (in process)',
    weight: 3,
    arbitrary,
    run: async (c) => {
      const failures: string[] = [];
      const outcomes: Record<string, number> = {};
      const { world: w, victimBefore } = await world(c.texts, { largestAttributes: c.largest === true });
      const reef = { id: 'Facts/reef.md', title: 'reef', text: 'The tank holds 30 gallons.', category: 'Facts', confidence: 0.95, sourceTurns: [1], summary: 'tank size', promotedAt: NOW };
      await w.knowledge.putKnowledge(ATTACKER, [{ path: reef.id, markdown: reef.text, doc: reef }]);
      w.writes.writes.length = 0;
      const model = new ScriptedModel(
        () => c.output,
        () => c.summary,
      );
      const deps = reflectorDeps(w, model);
      const ids = range(c.texts.length);
      const kind = c.use === 'summary' ? 'idle-summary' : c.use === 'batch' ? 'batch' : c.use;
      const job: Job = { type: 'reflector.job', version: 1, jobId: `${kind}-1-${ids.length}`, userId: ATTACKER, kind, trigger: 'turn_count', urgency: 6, turnIds: ids, requestedAt: NOW };
      if (c.use === 'weekly') deps.sleepTime.summaries = Object.assign(new MemorySummarySource(), { texts: [{ userId: ATTACKER, id: 'summary-1-3', createdAt: NOW, text: 'reef tank talk' }] });
      await guarded(failures, `${c.use} with an obedient model`, async () => {
        await recordPending(w, job);
        count(outcomes, await runJobRecord(w, JSON.stringify(job), deps));
      });
      failures.push(...storageProblems(w, new Set([ATTACKER]), victimBefore));
      for (const log of w.batchLogs.logs.values()) {
        failures.push(...capProblems(log));
        count(outcomes, `batch staged ${log.staged_files.length}`);
      }
      for (const run of w.runs.runs) if (run.stored.length > 30) failures.push(`a nightly run stored ${run.stored.length} findings`);
      return { failures, outcomes };
    },
  };
}

// ── All targets ────────────────────────────────────────────────────────────────

export async function fuzzTargets(o: FuzzOptions = {}): Promise<FuzzTarget[]> {
  const apiRoutes = (routes as readonly Route[]).filter((r) => r.access !== 'public');
  return [...turnQueueTargets(o), ...queueJobTargets(o), sweepTarget(await sweepInputSchema(), o), ...apiRoutes.map((r) => apiTarget(r, o) as FuzzTarget), injectionTarget(o) as FuzzTarget];
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
        fail(`the case itself threw: ${(error as Error)?.stack?.split('\n').slice(0, 4).join(' < ') ?? String(error)}`, input);
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
