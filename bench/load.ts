/**
 * Load (req R-TIER-10: "Load test: 100 concurrent sessions, no memory leaks"):
 * many sessions publish their turns at once, interleaved, against the local harness — the
 * real handlers on the emulators — and every turn must end up stored exactly once.
 *
 * Sessions and users: the unit of ordering and isolation here is the user (FIFO group =
 * userId, per-user turn ids, one signal-state item per user), so most sessions belong to a
 * user of their own, which is what lets 100 sessions run in parallel at all. A share of
 * users (by default 20 of 80) have two sessions open at once — an agent on a phone and one
 * on a laptop: both draw turn ids from the user's one counter and publish concurrently, so
 * their turns share a FIFO group and a signal state and may reach SQS out of order (the
 * later one first makes the earlier one "late": stored, not counted as a new turn).
 *
 * At-least-once: a share of turns is published a second time with a fresh deduplication
 * id (what a producer's retry after SQS's 5-minute window, or a replay, looks like): SQS
 * delivers it and the signal function's own idempotency must count it as a duplicate.
 * Another share is republished at once with the same deduplication id: SQS itself must
 * drop it (counted nowhere).
 *
 * Checks, per round, against the table and bucket directly: every published (user, turnId)
 * has exactly one turn-index entry (with the published content's hash) and exactly one
 * turn document; the signal state counted each turn once (counted + late = published);
 * duplicates counted = fresh-id republishes; nothing in a dead-letter queue; no handler
 * threw; nothing rejected.
 *
 * Used by test/integration/load.test.ts (small) and run alone as a script (`tsx
 * bench/load.ts [--sessions 100] [--turns 20] [--rounds 5] [--pollers 1] [--quick]`): it runs
 * a warm-up round, then several equal rounds with fresh users, and reports the process's
 * heap after a forced GC before and after each round — the handlers all run in this process
 * — so growth per round shows whether memory is bounded. Its last stdout line is the result
 * as JSON; it exits 1 if a turn was lost or doubled, a duplicate miscounted, a handler threw
 * or a message reached a DLQ.
 *
 * Reading the heap: the emulators share the process. This script deletes each round's
 * objects from fauxqs's in-memory S3 and clears the Converse endpoint's request log after
 * the round is checked; what it cannot clear is fauxqs's FIFO deduplication cache (up to
 * 10,000 ids per queue, kept for SQS's 5-minute window), which grows by about one entry per
 * message until it is full — at 100 × 20 turns that is about four rounds, which is why the
 * default is five: the last rounds show the heap flat once that cache stops growing.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteObjectsCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TurnSaved } from '../events/turn-saved.js';
import { type InvocationObserver, LocalEventSource, type SqsHandler } from '../infra/local/event-source.js';
import { type LocomoConversation, locomoToTurns } from '../infra/local/locomo.js';
import { listAllKeys } from '../lib/kernel/s3-objects.adapter.js';
import type { LocalHarness } from '../infra/local/harness.js';
import { FUNCTION_TIMEOUT_SECONDS, type QueueKey } from '../infra/resources.js';
import { queryAll } from '../lib/kernel/dynamo-query.adapter.js';
import { DynamoSignalStateStore } from '../lib/signals/dynamo-signal-state-store.adapter.js';
import { sqsSafeJson } from '../lib/turns/sqs-turn-publisher.adapter.js';
import { keys, usersRoot } from '../lib/kernel/memory-paths.js';
import { parseSignalState } from '../lib/signals/signal-state.js';
import { turnContentHash } from '../lib/turns/turn-document.js';

export const LOCOMO_FILES = ['conv-26.json', 'conv-30.json', 'conv-41.json', 'conv-42.json', 'conv-43.json'];

/** The words of LoCoMo's turns (query, response, attributes), one list per conversation. */
export type TurnTexts = Array<Array<Pick<TurnSaved, 'query' | 'response' | 'attributes'>>>;

export function readLocomoTexts(
  dir = process.env.LOCOMO_DIR ?? new URL('../../shared/data/locomo/', import.meta.url).pathname,
): TurnTexts {
  return LOCOMO_FILES.map((f) => {
    const conv = JSON.parse(readFileSync(join(dir, f), 'utf8')) as LocomoConversation;
    return locomoToTurns(conv, { userId: 'x', source: `locomo/${f.replace(/\.json$/, '')}` }).map(
      ({ query, response, attributes }) => ({
        query,
        response,
        ...(attributes ? { attributes } : {}),
      }),
    );
  });
}

export interface LoadOptions {
  /** Concurrent sessions. @default 100 */
  sessions: number;
  /** Distinct users; sessions beyond it go, one each, to the first users (a second session open at once). @default 80 % of sessions */
  users?: number;
  /** Turns each session publishes. */
  turns: number;
  /** Share of turns published a second time with a fresh deduplication id (reaches the handler). @default 0.1 */
  republishShare?: number;
  /** Share of turns republished at once with the same deduplication id (SQS drops it). @default 0.05 */
  sqsDuplicateShare?: number;
  /** Each session waits 0..maxGapMs before each turn. @default 40 */
  maxGapMs?: number;
  /** Prefix of this round's user ids (`{prefix}-u007`); a fresh one per round. */
  prefix: string;
  /** Seed of the plan's randomness (gaps, republish choices, LoCoMo offsets). @default 1 */
  seed?: number;
  /** Drain timeout. @default 10 minutes */
  drainTimeoutMs?: number;
}

export interface RoundResult {
  sessions: number;
  users: number;
  /** Users with more than one concurrent session. */
  sharedUsers: number;
  /** Distinct turns published (each once, plus the republishes below). */
  turnsPublished: number;
  /** Republished with a fresh deduplication id: must be counted as duplicates. */
  republished: number;
  /** Republished with the same deduplication id: SQS must drop them. */
  sqsDuplicates: number;
  /** Messages SQS refused at publication (should be none). */
  publishFailures: number;
  /** Distinct (user, turnId) in the turn index with the published content. */
  turnsStored: number;
  lost: number;
  doubled: number;
  /** Signal state: counted (new turns) and late (arrived after a higher id), summed. */
  counted: number;
  late: number;
  duplicatesCounted: number;
  /** Messages in the dead-letter queues (whole stack). */
  dlq: number;
  /** Invocations that threw (this round), and records handed back for retry (this round). */
  handlerErrors: number;
  retriedRecords: number;
  /** Rejected events (whole stack). */
  rejected: number;
  modelCalls: number;
  publishSeconds: number;
  /** From the first publication until every queue is drained (reflections and summaries included). */
  seconds: number;
  /** Distinct turns per second over `seconds`. */
  turnsPerSecond: number;
  /** Publication → the signal function returned with the turn (first delivery), ms. */
  signalLatencyMs: { p50: number; p95: number; max: number; samples: number };
  /** The first few problems found, for the report. */
  problems: string[];
}

/** Deterministic randomness (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted: readonly number[], p: number) =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0);

/**
 * Measures publication → signal-function latency: pass `observe` to startHarness (and
 * to extra pollers); `expect` each turn as it is published.
 */
export function latencyProbe() {
  const pending = new Map<string, number>();
  let samples: number[] = [];
  const observe: InvocationObserver = (inv) => {
    if (inv.fn !== 'signal' || pending.size === 0) return;
    for (const r of inv.records) {
      try {
        const { userId, turnId } = JSON.parse(r.body) as { userId?: unknown; turnId?: unknown };
        const key = `${String(userId)}#${String(turnId)}`;
        const at = pending.get(key);
        if (at === undefined) continue;
        pending.delete(key);
        samples.push(inv.finishedAt - at);
      } catch {
        // not JSON: not ours
      }
    }
  };
  return {
    observe,
    expect: (userId: string, turnId: number, at: number) => void pending.set(`${userId}#${turnId}`, at),
    /** The samples since the last take, and forget everything pending. */
    take(): RoundResult['signalLatencyMs'] {
      const sorted = [...samples].sort((a, b) => a - b);
      samples = [];
      pending.clear();
      return { p50: pct(sorted, 0.5), p95: pct(sorted, 0.95), max: sorted.at(-1) ?? 0, samples: sorted.length };
    },
  };
}
export type LatencyProbe = ReturnType<typeof latencyProbe>;

/**
 * More pollers on the stack's queues, invoking the same handler modules: Lambda runs up to
 * one concurrent invocation per active FIFO message group (and any number on a standard
 * queue), where the local harness runs one per queue. Call after startHarness (the
 * handlers read their environment at import). `extra` = pollers added per queue.
 */
export async function addPollers(stack: LocalHarness, extra: number, observe?: InvocationObserver) {
  const { info } = stack;
  const sqs = new SQSClient({ region: info.region, credentials: info.credentials, endpoint: info.endpoints.sqs });
  const handlers: Record<QueueKey, [SqsHandler, keyof typeof FUNCTION_TIMEOUT_SECONDS]> = {
    turn: [stack.handlers.signal, 'signal'],
    job: [stack.handlers.reflector, 'reflector'],
    idle: [stack.handlers.idle, 'idle'],
  };
  const errors: unknown[] = [];
  const sources: LocalEventSource[] = [];
  for (let i = 0; i < extra; i++) {
    for (const [key, [handler, fn]] of Object.entries(handlers) as Array<
      [QueueKey, [SqsHandler, keyof typeof FUNCTION_TIMEOUT_SECONDS]]
    >) {
      sources.push(
        new LocalEventSource({
          name: key,
          sqs,
          queueUrl: info.queues[key].url,
          queueArn: info.queues[key].arn,
          region: info.region,
          handler,
          functionName: `reflective-memory-${info.stage}-${fn}`,
          timeoutSeconds: FUNCTION_TIMEOUT_SECONDS[fn],
          fn,
          onError: (error) => errors.push(error),
          ...(observe ? { observe } : {}),
        }),
      );
    }
  }
  for (const s of sources) s.start();
  return {
    sources,
    errors,
    async stop() {
      await Promise.all(sources.map((s) => s.stop()));
      sqs.destroy();
    },
  };
}
export type ExtraPollers = Awaited<ReturnType<typeof addPollers>>;

interface SessionPlan {
  userId: string;
  sessionId: string;
  texts: TurnTexts[number];
  /** Per turn: gap before it, republish (fresh id) after `republishAfter` more turns, or not; SQS duplicate. */
  steps: Array<{ gapMs: number; republishAfter: number | null; sqsDuplicate: boolean }>;
}

export function planRound(texts: TurnTexts, options: LoadOptions): SessionPlan[] {
  const random = rng(options.seed ?? 1);
  const users = Math.max(1, Math.min(options.users ?? Math.ceil(options.sessions * 0.8), options.sessions));
  const republishShare = options.republishShare ?? 0.1;
  const sqsDuplicateShare = options.sqsDuplicateShare ?? 0.05;
  const maxGapMs = options.maxGapMs ?? 40;
  const width = String(users).length;
  return Array.from({ length: options.sessions }, (_, s) => {
    const conv = texts[s % texts.length] ?? [];
    const start = Math.floor(random() * conv.length);
    return {
      userId: `${options.prefix}-u${String(s % users).padStart(width, '0')}`,
      sessionId: `${options.prefix}-s${s}`,
      texts: Array.from(
        { length: options.turns },
        (_, i) => conv[(start + i) % conv.length] ?? { query: `turn ${i}`, response: 'ok' },
      ),
      steps: Array.from({ length: options.turns }, () => ({
        gapMs: Math.floor(random() * maxGapMs),
        republishAfter: random() < republishShare ? Math.floor(random() * 3) : null,
        sqsDuplicate: random() < sqsDuplicateShare,
      })),
    };
  });
}

/** What a round published: per user its counter and turns (id → content hash), and the republishes. */
interface Published {
  /** user → the last turn id drawn from the user's one counter. */
  counters: Map<string, number>;
  /** user → turnId → the published content's hash. */
  expected: Map<string, Map<number, string>>;
  republishedByUser: Map<string, number>;
  republished: number;
  sqsDuplicates: number;
  publishFailures: number;
}

/** The first 20 problems found, and a function to report one. */
function problemList() {
  const problems: string[] = [];
  return { problems, problem: (p: string) => void (problems.length < 20 && problems.push(p)) };
}
type Problem = (p: string) => void;

/** Handler errors and records handed back, over the stack's pollers and the extra ones. */
function sourceStats(stack: LocalHarness, pollers?: ExtraPollers) {
  const all = [...Object.values(stack.sources), ...(pollers?.sources ?? [])];
  return {
    handlerErrors: all.reduce((n, s) => n + s.stats.handlerErrors, 0),
    failed: all.reduce((n, s) => n + s.stats.failedRecords, 0),
  };
}

/**
 * One round: every session publishes its turns concurrently (interleaved by their gaps),
 * the queues drain, and the table and bucket are checked. `probe` (optional) measures
 * signal latency; `pollers` (optional) adds their errors to the round's handler errors.
 */
export async function runLoadRound(
  stack: LocalHarness,
  texts: TurnTexts,
  options: LoadOptions,
  extras: { probe?: LatencyProbe; pollers?: ExtraPollers } = {},
): Promise<RoundResult> {
  const plan = planRound(texts, options);
  const pub: Published = {
    counters: new Map(),
    expected: new Map(),
    republishedByUser: new Map(),
    republished: 0,
    sqsDuplicates: 0,
    publishFailures: 0,
  };
  const { problems, problem } = problemList();
  const statsBefore = sourceStats(stack, extras.pollers);
  const modelCallsBefore = stack.emulators.converse.requests.length;

  const started = performance.now();
  await Promise.all(plan.map((p) => publishSession(stack, p, pub, extras.probe)));
  const publishSeconds = (performance.now() - started) / 1000;
  await stack.waitUntilDrained({ timeoutMs: options.drainTimeoutMs ?? 10 * 60_000 });
  const seconds = (performance.now() - started) / 1000;

  const stored = await checkStored(stack, options.prefix, pub, problem);
  const summary = await stack.report();
  const stats = sourceStats(stack, extras.pollers);
  const extraErrors = extras.pollers?.errors.length ?? 0;
  if (extras.pollers) extras.pollers.errors.length = 0;
  const turnsPublished = [...pub.expected.values()].reduce((n, m) => n + m.size, 0);
  return {
    sessions: plan.length,
    users: pub.expected.size,
    sharedUsers: [...new Set(plan.map((p) => p.userId))].filter((u) => plan.filter((p) => p.userId === u).length > 1)
      .length,
    turnsPublished,
    republished: pub.republished,
    sqsDuplicates: pub.sqsDuplicates,
    publishFailures: pub.publishFailures,
    ...stored,
    dlq: summary.errors,
    handlerErrors: stats.handlerErrors - statsBefore.handlerErrors + extraErrors,
    retriedRecords: stats.failed - statsBefore.failed,
    rejected: summary.rejected,
    modelCalls: stack.emulators.converse.requests.length - modelCallsBefore,
    publishSeconds: round2(publishSeconds),
    seconds: round2(seconds),
    turnsPerSecond: round2(turnsPublished / seconds),
    signalLatencyMs: extras.probe?.take() ?? { p50: 0, p95: 0, max: 0, samples: 0 },
    problems,
  };
}

/** Publishes a turn again with a fresh deduplication id: SQS delivers it, the signal function must count it a duplicate. */
async function republish(stack: LocalHarness, turn: TurnSaved, pub: Published): Promise<void> {
  const res = await stack.publisher.publishRaw([
    { body: sqsSafeJson(JSON.stringify(turn)), groupId: turn.userId, deduplicationId: `load-again-${randomUUID()}` },
  ]);
  pub.publishFailures += res.failed.length;
  if (res.sent === 1) {
    pub.republished += 1;
    pub.republishedByUser.set(turn.userId, (pub.republishedByUser.get(turn.userId) ?? 0) + 1);
  }
}

/** One session: its turns after their gaps, each with the SQS duplicate and the delayed republish its plan asks for. */
async function publishSession(
  stack: LocalHarness,
  p: SessionPlan,
  pub: Published,
  probe?: LatencyProbe,
): Promise<void> {
  const due: Array<{ at: number; turn: TurnSaved }> = [];
  for (let i = 0; i < p.steps.length; i++) {
    const step = p.steps[i];
    const text = p.texts[i];
    if (!step || !text) continue;
    await sleep(step.gapMs);
    // The user's one counter: a second session of the same user takes the next id.
    const turnId = (pub.counters.get(p.userId) ?? 0) + 1;
    pub.counters.set(p.userId, turnId);
    const turn: TurnSaved = {
      type: 'turn.saved',
      version: 1,
      userId: p.userId,
      sessionId: p.sessionId,
      turnId,
      timestamp: new Date().toISOString(),
      ...text,
    };
    const byTurn = pub.expected.get(p.userId) ?? new Map<number, string>();
    byTurn.set(turnId, turnContentHash(turn));
    pub.expected.set(p.userId, byTurn);
    probe?.expect(p.userId, turnId, Date.now());
    const res = await stack.publisher.publish([turn]);
    pub.publishFailures += res.failed.length;
    if (step.sqsDuplicate) {
      const again = await stack.publisher.publish([turn]);
      pub.publishFailures += again.failed.length;
      pub.sqsDuplicates += 1;
    }
    if (step.republishAfter !== null) due.push({ at: i + step.republishAfter, turn });
    for (const d of due.filter((d) => d.at <= i)) await republish(stack, d.turn, pub);
    due.splice(0, due.length, ...due.filter((d) => d.at > i));
  }
  for (const d of due) await republish(stack, d.turn, pub);
}

type StoredCheck = Pick<RoundResult, 'turnsStored' | 'lost' | 'doubled' | 'counted' | 'late' | 'duplicatesCounted'>;

/** Checks every published turn against the table and the bucket themselves. */
async function checkStored(
  stack: LocalHarness,
  prefix: string,
  pub: Published,
  problem: Problem,
): Promise<StoredCheck> {
  const { info } = stack;
  const aws = { region: info.region, credentials: info.credentials };
  const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ ...aws, endpoint: info.endpoints.dynamodb }));
  const s3 = new S3Client({ ...aws, endpoint: info.endpoints.s3, forcePathStyle: true });
  try {
    const signalState = new DynamoSignalStateStore({ ddb, tableName: info.tableName });
    const docs = await turnDocuments(s3, info.bucketName, prefix);
    const check: StoredCheck = { turnsStored: 0, lost: 0, doubled: 0, counted: 0, late: 0, duplicatesCounted: 0 };
    await Promise.all(
      [...pub.expected.entries()].map(async ([userId, turns]) => {
        const index = await turnIndex(ddb, info.tableName, userId);
        checkUserTurns(userId, turns, index, docs, check, problem);
        const { state } = parseSignalState((await signalState.load(userId)).raw);
        checkSignalCounters(userId, turns.size, state.counters, pub.republishedByUser.get(userId) ?? 0, check, problem);
      }),
    );
    return check;
  } finally {
    ddb.destroy();
    s3.destroy();
  }
}

/** The round's turn documents in the bucket: `user#turnId` → the hashes their file names carry. */
async function turnDocuments(s3: S3Client, bucket: string, prefix: string): Promise<Map<string, string[]>> {
  const docKeys = (await listAllKeys(s3, bucket, `${usersRoot}${prefix}-`)).filter((k) => k.includes('/turns/'));
  const docs = new Map<string, string[]>();
  for (const k of docKeys) {
    const m = /^users\/([^/]+)\/turns\/(\d+)\/([^/]+)\.md$/.exec(k);
    if (!m) continue;
    const id = `${m[1]}#${Number(m[2])}`;
    docs.set(id, [...(docs.get(id) ?? []), m[3] ?? '']);
  }
  return docs;
}

/** A user's turn index: turnId → the content hashes of its entries, and the hashes of inline documents. */
async function turnIndex(ddb: DynamoDBDocumentClient, tableName: string, userId: string) {
  const entries = await queryAll(ddb, {
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
    ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':t': keys.turnPrefix },
    ProjectionExpression: 'turnId, contentHash, docKey',
    ConsistentRead: true,
  });
  const byId = new Map<number, string[]>();
  // A small turn's document is inline in its index entry: the entry is its document.
  const inline = new Map<number, string>();
  for (const e of entries) {
    byId.set(Number(e.turnId), [...(byId.get(Number(e.turnId)) ?? []), String(e.contentHash)]);
    if (e.docKey === undefined) inline.set(Number(e.turnId), String(e.contentHash));
  }
  return { byId, inline };
}

/** Each published turn has exactly one index entry and one document with its hash; no entry was never published. */
function checkUserTurns(
  userId: string,
  turns: ReadonlyMap<number, string>,
  { byId, inline }: Awaited<ReturnType<typeof turnIndex>>,
  docs: ReadonlyMap<string, string[]>,
  check: StoredCheck,
  problem: Problem,
): void {
  for (const [turnId, hash] of turns) {
    const found = byId.get(turnId) ?? [];
    const files = [
      ...(docs.get(`${userId}#${turnId}`) ?? []),
      ...(inline.has(turnId) ? [inline.get(turnId) as string] : []),
    ];
    if (found.length === 0 || !found.includes(hash) || !files.includes(hash)) {
      check.lost += 1;
      problem(
        `lost ${userId} turn ${turnId}: index ${JSON.stringify(found)}, documents ${JSON.stringify(files)}, published ${hash}`,
      );
      continue;
    }
    check.turnsStored += 1;
    if (found.length > 1 || files.length > 1) {
      check.doubled += 1;
      problem(`doubled ${userId} turn ${turnId}: index ${JSON.stringify(found)}, documents ${JSON.stringify(files)}`);
    }
  }
  for (const turnId of byId.keys()) {
    if (!turns.has(turnId)) {
      check.doubled += 1;
      problem(`${userId} has turn ${turnId} that was never published`);
    }
  }
}

/** The signal state counted each turn once (counted + late = published) and each fresh-id republish as a duplicate. */
function checkSignalCounters(
  userId: string,
  published: number,
  c: { turns: number; late: number; duplicates: number },
  republished: number,
  check: StoredCheck,
  problem: Problem,
): void {
  check.counted += c.turns;
  check.late += c.late;
  check.duplicatesCounted += c.duplicates;
  if (c.turns + c.late !== published) {
    problem(`${userId}: signal state counted ${c.turns} + ${c.late} late for ${published} published turns`);
    if (c.turns + c.late > published) check.doubled += c.turns + c.late - published;
    else check.lost += published - c.turns - c.late;
  }
  if (c.duplicates !== republished)
    problem(`${userId}: ${c.duplicates} duplicates counted for ${republished} republished`);
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Delete a round's objects from the bucket. fauxqs keeps S3 in this process's memory, so
 * without this the heap would grow with the data stored — the emulator's, not the handlers'.
 */
export async function dropRoundObjects(stack: LocalHarness, prefix: string): Promise<number> {
  const { info } = stack;
  const s3 = new S3Client({
    region: info.region,
    credentials: info.credentials,
    endpoint: info.endpoints.s3,
    forcePathStyle: true,
  });
  try {
    const all = await listAllKeys(s3, info.bucketName, `${usersRoot}${prefix}-`);
    for (let i = 0; i < all.length; i += 1000) {
      await s3.send(
        new DeleteObjectsCommand({
          Bucket: info.bucketName,
          Delete: { Objects: all.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
        }),
      );
    }
    return all.length;
  } finally {
    s3.destroy();
  }
}

/** A full GC, through the flag when the process has it (`--expose-gc`), else switched on now. */
export function collectGarbage(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

export interface HeapSample {
  heapUsedMB: number;
  heapTotalMB: number;
  rssMB: number;
  externalMB: number;
  arrayBuffersMB: number;
}

/** Memory after full GCs (and a turn of the event loop, so finalisers can run). */
export async function heapAfterGc(gc: () => void): Promise<HeapSample> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  const m = process.memoryUsage();
  const mb = (n: number) => round2(n / 1024 / 1024);
  return {
    heapUsedMB: mb(m.heapUsed),
    heapTotalMB: mb(m.heapTotal),
    rssMB: mb(m.rss),
    externalMB: mb(m.external),
    arrayBuffersMB: mb(m.arrayBuffers),
  };
}

/** What a run of this script reports (its last stdout line). */
export interface LoadReport {
  ok: boolean;
  sessions: number;
  users: number;
  sharedUsers: number;
  turnsPerSession: number;
  rounds: number;
  pollersPerQueue: number;
  turnsPublished: number;
  turnsStored: number;
  lost: number;
  doubled: number;
  republished: number;
  duplicatesCounted: number;
  sqsDuplicatesDropped: number;
  late: number;
  dlq: number;
  rejected: number;
  handlerErrors: number;
  retriedRecords: number;
  turnsPerSecond: number[];
  signalLatencyMs: Array<RoundResult['signalLatencyMs']>;
  heap: {
    started: HeapSample;
    before?: HeapSample;
    after?: HeapSample;
    rounds: Array<HeapSample & { round: number }>;
    growthPerRoundMB: number;
    growthMB: number;
    lastRoundGrowthMB: number;
    rssGrowthMB: number;
  };
  /** The leak check (null with too few rounds after the settling ones). */
  leak: LeakCheck | null;
  perRound: Array<Omit<RoundResult, 'problems'> & { problems: number }>;
  seconds: number;
}

/**
 * Rounds before the leak check's slope: the emulators' own state settles first. fauxqs keeps a
 * record per FIFO message (its deduplication id, message id and time) for SQS's 5-minute
 * deduplication window, and a round sends some 2,300 turn messages in about 45 s: the records
 * stop growing once the window turns over, after about seven rounds (heap snapshots of rounds 4
 * and 7 at 6fd0090: ~7,000 new 64-hex ids, UUIDs and times, about one of each per message).
 */
export const SETTLE_ROUNDS = 8;
/**
 * The leak bound: heap used after GC may grow by at most this many bytes per turn published,
 * over the rounds after SETTLE_ROUNDS (least squares). Anything the handlers kept per turn
 * (a map entry keyed by a message or turn id is 100 bytes or more) would exceed it.
 */
export const LEAK_BOUND_BYTES_PER_TURN = 100;

export interface LeakCheck {
  /** The rounds the slope is taken over. */
  rounds: number[];
  slopeMBPerRound: number;
  boundMBPerRound: number;
  held: boolean;
}

/** The leak check over `heapUsedMB` per round (rounds 1..n) of `turnsPerRound` turns each; null without 3 rounds after the settling ones. */
export function leakCheck(heapUsedMB: readonly number[], turnsPerRound: number): LeakCheck | null {
  const settled = heapUsedMB.slice(SETTLE_ROUNDS);
  if (settled.length < 3) return null;
  const slopeMBPerRound = round2(slope(settled));
  const boundMBPerRound = round2((LEAK_BOUND_BYTES_PER_TURN * turnsPerRound) / 1024 / 1024);
  return {
    rounds: settled.map((_, i) => SETTLE_ROUNDS + i + 1),
    slopeMBPerRound,
    boundMBPerRound,
    held: slopeMBPerRound <= boundMBPerRound,
  };
}

/** Least-squares slope of ys over 1..n. */
const slope = (ys: readonly number[]) => {
  const n = ys.length;
  if (n < 2) return 0;
  const mx = (n + 1) / 2;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  const num = ys.reduce((a, y, i) => a + (i + 1 - mx) * (y - my), 0);
  const den = ys.reduce((a, _, i) => a + (i + 1 - mx) ** 2, 0);
  return num / den;
};

/** Run alone (one local harness per process): prints progress on stderr and the result as JSON on the last stdout line. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      sessions: { type: 'string', default: '100' },
      users: { type: 'string' },
      turns: { type: 'string' },
      rounds: { type: 'string' },
      republish: { type: 'string', default: '0.1' },
      pollers: { type: 'string', default: '1' },
      'keep-data': { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
      dir: { type: 'string' },
    },
    strict: true,
  });
  const sessions = Number(values.sessions);
  const turns = Number(values.turns ?? (values.quick ? 5 : 20));
  // Enough rounds for the leak check: SETTLE_ROUNDS, then four to take the slope over.
  const rounds = Number(values.rounds ?? (values.quick ? 2 : SETTLE_ROUNDS + 4));
  const pollers = Number(values.pollers);
  const log = (s: string) => process.stderr.write(`[load] ${s}\n`);
  const gc = collectGarbage();
  const texts = readLocomoTexts(values.dir);
  const probe = latencyProbe();
  const t0 = performance.now();
  const { startHarness } = await import('../infra/local/harness.js');
  const stack = await startHarness({ stage: 'load', logLevel: 'SILENT', speed: 300, observe: probe.observe });
  let extra: ExtraPollers | undefined;
  let exitCode = 0;
  try {
    extra = pollers > 1 ? await addPollers(stack, pollers - 1, probe.observe) : undefined;
    const common = {
      sessions,
      turns,
      republishShare: Number(values.republish),
      ...(values.users ? { users: Number(values.users) } : {}),
    };
    const heap: {
      started: HeapSample;
      before?: HeapSample;
      after?: HeapSample;
      rounds: Array<HeapSample & { round: number }>;
    } = { started: await heapAfterGc(gc), rounds: [] };
    // Warm-up: the same shape, fewer turns, so modules, clients and connection pools exist before the first measurement.
    const warm = await runLoadRound(
      stack,
      texts,
      { ...common, turns: Math.min(3, turns), prefix: 'warm', seed: 99 },
      { probe, ...(extra ? { pollers: extra } : {}) },
    );
    log(`warm-up: ${warm.turnsPublished} turns in ${warm.seconds} s, lost ${warm.lost}, doubled ${warm.doubled}`);
    if (!values['keep-data']) await dropRoundObjects(stack, 'warm');
    stack.emulators.converse.requests.length = 0;
    heap.before = await heapAfterGc(gc);
    log(`heap before: ${JSON.stringify(heap.before)}`);
    const results: RoundResult[] = [];
    for (let r = 1; r <= rounds; r++) {
      const res = await runLoadRound(
        stack,
        texts,
        { ...common, prefix: `load-r${r}`, seed: r },
        { probe, ...(extra ? { pollers: extra } : {}) },
      );
      results.push(res);
      // fauxqs's S3 and the Converse endpoint's request log live in this process: drop this round's share of them.
      if (!values['keep-data']) await dropRoundObjects(stack, `load-r${r}`);
      stack.emulators.converse.requests.length = 0;
      const h = await heapAfterGc(gc);
      // LOAD_SNAPSHOTS=8,12: a heap snapshot after those rounds' GC, for bench/heap-diff.ts.
      if ((process.env.LOAD_SNAPSHOTS ?? '').split(',').includes(String(r)))
        v8.writeHeapSnapshot(`/tmp/load-r${r}.heapsnapshot`);
      heap.rounds.push({ round: r, ...h });
      const { problems, ...shown } = res;
      log(`round ${r}: ${JSON.stringify(shown)}; heap ${JSON.stringify(h)}`);
      for (const p of problems) log(`  ${p}`);
    }
    heap.after = heap.rounds.at(-1);
    const total = (
      k:
        | 'turnsPublished'
        | 'turnsStored'
        | 'lost'
        | 'doubled'
        | 'duplicatesCounted'
        | 'republished'
        | 'sqsDuplicates'
        | 'late'
        | 'handlerErrors'
        | 'retriedRecords',
    ) => results.reduce((n, r) => n + r[k], 0);
    const usedPerRound = heap.rounds.map((h) => h.heapUsedMB);
    const last = results.at(-1);
    const out: Omit<LoadReport, 'ok'> = {
      sessions,
      users: results[0]?.users ?? 0,
      sharedUsers: results[0]?.sharedUsers ?? 0,
      turnsPerSession: turns,
      rounds,
      pollersPerQueue: pollers,
      turnsPublished: total('turnsPublished'),
      turnsStored: total('turnsStored'),
      lost: total('lost'),
      doubled: total('doubled'),
      republished: total('republished'),
      duplicatesCounted: total('duplicatesCounted'),
      sqsDuplicatesDropped: total('sqsDuplicates'),
      late: total('late'),
      dlq: last?.dlq ?? 0,
      rejected: last?.rejected ?? 0,
      handlerErrors: total('handlerErrors'),
      retriedRecords: total('retriedRecords'),
      turnsPerSecond: results.map((r) => r.turnsPerSecond),
      signalLatencyMs: results.map((r) => r.signalLatencyMs),
      heap: {
        ...heap,
        /** Heap used after GC: growth per round (least squares over the rounds) and from before the first to after the last. */
        growthPerRoundMB: round2(slope(usedPerRound)),
        growthMB: round2((heap.after?.heapUsedMB ?? 0) - (heap.before?.heapUsedMB ?? 0)),
        /** The last round's own growth (after it − after the one before). */
        lastRoundGrowthMB: round2((usedPerRound.at(-1) ?? 0) - (usedPerRound.at(-2) ?? heap.before?.heapUsedMB ?? 0)),
        rssGrowthMB: round2((heap.after?.rssMB ?? 0) - (heap.before?.rssMB ?? 0)),
      },
      leak: leakCheck(usedPerRound, Math.round(total('turnsPublished') / Math.max(1, results.length))),
      perRound: results.map(({ problems, ...r }) => ({ ...r, problems: problems.length })),
      seconds: round2((performance.now() - t0) / 1000),
    };
    const ok =
      out.lost === 0 &&
      out.doubled === 0 &&
      out.dlq === 0 &&
      out.duplicatesCounted === out.republished &&
      out.handlerErrors === 0 &&
      out.leak?.held !== false;
    if (!ok) exitCode = 1;
    console.log(JSON.stringify({ ok, ...out } satisfies LoadReport));
  } catch (error) {
    console.error(error);
    exitCode = 1;
  } finally {
    await extra?.stop();
    await stack.stop();
  }
  process.exit(exitCode);
}
