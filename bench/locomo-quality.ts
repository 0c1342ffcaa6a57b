/**
 * Benchmark: memory quality on LoCoMo. Each conversation is converted to
 * turn.saved events (infra/local/locomo.ts), replayed through the local harness with its
 * simulated clock (nightly and weekly runs included), then every QA item is asked through
 * the memory API (`POST /v1/users/{u}/memory/search`, as an agent would). Evidence recall
 * uses each result's `sourceTurns` → the turns' `attributes.dia_ids`. The floor, measured
 * in the same run: plain BM25 (MiniSearch) over the raw turns; and, as a stronger baseline,
 * the same with Porter stemming (which memory.search uses).
 *
 * Run alone: `tsx bench/locomo-quality.ts [--quick] [--dir DIR]`; the last line printed is
 * the result as JSON (bench/run.ts runs it in its own process: one local harness per process).
 */
import { readFileSync } from 'node:fs';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { SQSRecord } from 'aws-lambda';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { TurnSaved } from '../events/turn-saved.js';
import { type LocomoConversation, locomoToTurns } from '../infra/local/locomo.js';
import { keys } from '../lib/kernel/memory-paths.js';
import { batchLogOf } from '../lib/batches/batch-log-store.adapter.js';
import { queryAll } from '../lib/kernel/dynamo-query.adapter.js';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type RunReport, startHarness } from '../infra/local/harness.js';
import { stageConfig } from '../infra/config/stages.js';
import type { Invocation } from '../infra/local/event-source.js';
import { addLedger, type LedgerEntry, ledgerDelta, requestLedger } from '../infra/local/request-ledger.js';
import { KnowledgeSearch } from '../lib/knowledge/knowledge-search.js';
import type { BatchLog } from '../lib/batches/batch-log.js';
import { type DiaryRecord, diaryMarkdown } from '../lib/diary/diary.js';
import { contentWords, estimateTokens } from '../lib/kernel/text.js';
import { printReport } from './print-report.js';

export const KS = [1, 5, 10] as const;

export interface Recall {
  any: Record<(typeof KS)[number], number>;
  all: Record<(typeof KS)[number], number>;
}

export interface QualityResult {
  conversations: string[];
  turns: number;
  questions: number;
  byCategory: Record<string, number>;
  /** memory.search's recall per LoCoMo category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop). */
  memoryByCategory: Record<string, Recall>;
  memory: Recall;
  floor: Recall;
  /** A stronger baseline: the same BM25 over the raw turns with Porter stemming, as memory.search stems. */
  stemmedFloor: Recall;
  /** Category 5 (adversarial): share of questions for which search returned nothing. */
  adversarial: { questions: number; emptyShare: number; floorEmptyShare: number };
  /** Tokens of the top 5 results vs tokens of the raw turns those results stand for, per question. */
  tokens: { memoryTop5: number; rawTurnsTheyStandFor: number; floorTop5: number };
  /** Annotated session events matched by a staged or promoted item derived from that session. */
  extraction: { events: number; covered: number; share: number };
  /**
   * The selective diary (req R-DIARY): entries a per-turn diary would write (one per turn)
   * vs entries written; attempts rejected by reason; criteria met; and the annotated session
   * events it still covers — by session (an entry reviewed a turn of the event's session) and
   * by content (that entry shares MIN_SHARED_WORDS content words with the event).
   */
  diary: {
    perTurnEntries: number;
    attempts: number;
    written: number;
    reduction: number;
    byCriterion: Record<string, number>;
    rejected: Record<string, number>;
    events: number;
    coveredBySession: number;
    coveredByContent: number;
  };
  /** Documents promoted to Knowledge/ and those still staged at the end of the replays, and promotions per 100 turns. */
  promotion: { staged: number; promoted: number; per100Turns: number };
  /** Result kinds in the memory search's top 5, over all questions. */
  kinds: Record<string, number>;
  /** Share of the results in the memory search's top 10, over all questions, that are tier entries (tierEntryShare). */
  tierShareTop10: number;
  /** What the replays used (ingest: replay + a day of sweeps; retrieval: the QA searches). */
  usage: {
    ingest: PhaseUse;
    retrieval: PhaseUse;
    records: number;
    storedBytes: { dynamodb: number; s3: number };
    storage: StorageUse;
    sweepFires: number;
    logBytes: Record<string, number>;
    metrics: string[];
    s3ByKeyClass: Record<string, number>;
  };
  /** Per conversation: medians of signal time per turn and of trigger → staged (ms), and all samples' spread. */
  latency: {
    signalMsPerTurn: Spread;
    triggerToStagedMs: Spread;
    searchApiMs: Spread;
  };
  seconds: number;
}

/** What the stack holds at the end, as a bill counts it. */
export interface StorageUse {
  /** The table's items and their bytes (DescribeTable), and its global secondary index's. */
  dynamodbItems: number;
  dynamodbBytes: number;
  gsiBytes: number;
  /** Current objects in the bucket and their bytes. */
  s3Objects: number;
  s3Bytes: number;
  /** Objects carrying the `kind=turn` tag (large turn documents). */
  taggedObjects: number;
}

export interface PhaseUse {
  /** Per function (the ledger scope the local harness invoked it in): its AWS requests, invocations and Σ billed ms (each invocation rounded up to 1 ms). */
  byFunction: Record<string, { ledger: Record<string, LedgerEntry>; invocations: number; billedMs: number }>;
}

/** Median and p95 over all samples, and the range of the per-run (per-conversation) medians. */
export interface Spread {
  samples: number;
  median: number;
  p95: number;
  runMedians: number[];
}

const quantile = (xs: readonly number[], q: number): number => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? 0;
};

function spread(runs: ReadonlyArray<readonly number[]>): Spread {
  const all = runs.flat();
  const r1 = (n: number) => Math.round(n * 10) / 10;
  return {
    samples: all.length,
    median: r1(quantile(all, 0.5)),
    p95: r1(quantile(all, 0.95)),
    runMedians: runs.filter((r) => r.length > 0).map((r) => r1(quantile(r, 0.5))),
  };
}

const emptyPhase = (): PhaseUse => ({ byFunction: {} });

function addPhase(
  into: PhaseUse,
  ledger: Record<string, Record<string, LedgerEntry>>,
  invocations: readonly Invocation[],
): void {
  const fnUse = (fn: string) => {
    const use = into.byFunction[fn] ?? { ledger: {}, invocations: 0, billedMs: 0 };
    into.byFunction[fn] = use;
    return use;
  };
  for (const [fn, entries] of Object.entries(ledger)) addLedger(fnUse(fn).ledger, entries);
  for (const i of invocations) {
    const use = fnUse(i.fn);
    use.invocations += 1;
    use.billedMs += Math.ceil(i.ms);
  }
}

const jobKind = (r: SQSRecord): string | null => {
  try {
    const body = JSON.parse(r.body) as { type?: unknown; kind?: unknown };
    return body.type === 'reflector.job' && typeof body.kind === 'string' ? body.kind : null;
  } catch {
    return null;
  }
};

interface Qa {
  question: string;
  evidence?: string[];
  category: number;
}

const evidenceIds = (qa: Qa): string[] =>
  (qa.evidence ?? []).flatMap((e) => e.split(/[;,\s]+/)).filter((e) => /^D\d+:\d+$/.test(e));

function recallAt(ranked: ReadonlyArray<ReadonlySet<string>>, evidence: readonly string[]) {
  const out = { any: {} as Record<number, boolean>, all: {} as Record<number, boolean> };
  for (const k of KS) {
    const covered = new Set(ranked.slice(0, k).flatMap((s) => [...s]));
    out.any[k] = evidence.some((e) => covered.has(e));
    out.all[k] = evidence.every((e) => covered.has(e));
  }
  return out;
}

const emptyRecall = (): Recall => ({ any: { 1: 0, 5: 0, 10: 0 }, all: { 1: 0, 5: 0, 10: 0 } });

type RecallHit = ReturnType<typeof recallAt>;

function addRecall(into: Recall, hit: RecallHit): void {
  for (const k of KS) {
    into.any[k] += Number(hit.any[k]);
    into.all[k] += Number(hit.all[k]);
  }
}

type LocalHarness = Awaited<ReturnType<typeof startHarness>>;
type Conversation = LocomoConversation & { qa: Qa[] };
interface SearchHit {
  kind: string;
  text: string;
  sourceTurns: number[];
}
/** memory.search through the API, for one user. */
type Search = (query: string, limit: number, filters?: Record<string, unknown>) => Promise<SearchHit[]>;

/** Running totals over all conversations; `qualityResult` turns them into shares and means. */
interface Tally {
  turns: number;
  questions: number;
  byCategory: Record<string, number>;
  memoryByCategory: Record<string, Recall>;
  memory: Recall;
  floor: Recall;
  stemmedFloor: Recall;
  kinds: Record<string, number>;
  top10: Top10Tally;
  adversarial: { questions: number; empty: number; floorEmpty: number };
  tokens: QualityResult['tokens'];
  extraction: { events: number; covered: number };
  diary: Omit<QualityResult['diary'], 'reduction'>;
  latencyRuns: { signal: number[][]; trigger: number[][]; search: number[][] };
}

const emptyTally = (): Tally => ({
  turns: 0,
  questions: 0,
  byCategory: {},
  memoryByCategory: {},
  memory: emptyRecall(),
  floor: emptyRecall(),
  stemmedFloor: emptyRecall(),
  kinds: {},
  top10: { results: 0, tierEntries: 0 },
  adversarial: { questions: 0, empty: 0, floorEmpty: 0 },
  tokens: { memoryTop5: 0, rawTurnsTheyStandFor: 0, floorTop5: 0 },
  extraction: { events: 0, covered: 0 },
  diary: {
    perTurnEntries: 0,
    attempts: 0,
    written: 0,
    byCriterion: {},
    rejected: {},
    events: 0,
    coveredBySession: 0,
    coveredByContent: 0,
  },
  latencyRuns: { signal: [], trigger: [], search: [] },
});

/**
 * Cuts the run into phases: `end(into)` adds the ledger deltas (per function) and the
 * invocations observed since the last cut to `into` (none when null) and returns those invocations.
 */
function phaseMeter() {
  let invocations: Invocation[] = [];
  let mark = requestLedger.snapshotByScope();
  return {
    observe: (i: Invocation) => void invocations.push(i),
    end(into: PhaseUse | null): Invocation[] {
      const now = requestLedger.snapshotByScope();
      if (into)
        addPhase(
          into,
          Object.fromEntries(Object.entries(now).map(([fn, entries]) => [fn, ledgerDelta(mark[fn] ?? {}, entries)])),
          invocations,
        );
      const done = invocations;
      mark = now;
      invocations = [];
      return done;
    },
  };
}

/** What every conversation's steps share: the stack, a client on its bucket, the phase meter and the phases' use. */
interface Run {
  stack: LocalHarness;
  s3: S3Client;
  meter: ReturnType<typeof phaseMeter>;
  ingest: PhaseUse;
  retrieval: PhaseUse;
}

export async function benchLocomoQuality(files: readonly string[]): Promise<QualityResult> {
  const started = Date.now();
  // DynamoDB units by item kind too (`ItemKind.…` ledger entries; the cost section prints them).
  requestLedger.recordItemKinds(true);
  const meter = phaseMeter();
  // Logs at the production stage's level and metrics on, as a deployment writes them: their
  // bytes are counted per function (the lines' `service`) and kept off the terminal.
  const logs = captureLogBytes();
  const prod = stageConfig('prod');
  const stack = await startHarness({
    stage: 'bench',
    // Routine reflections as prod runs them (lib/batch-inference/routine-batch.ts), a job's minimum
    // lowered to one record: the replay's five users keep a few a night, where 1M turns a month keep
    // about a thousand (BENCHMARKS.md, cost), far past the quota's 100.
    config: { ...stageConfig('bench'), routineInference: { ...prod.routineInference, minRecords: 1 } },
    logLevel: prod.logLevel,
    metrics: true,
    speed: 300,
    observe: meter.observe,
  });
  meter.end(null);
  const s3Before = requestLedger.s3ByKeyClass();
  const s3 = new S3Client({
    region: stack.info.region,
    credentials: stack.info.credentials,
    endpoint: stack.info.endpoints.s3,
    forcePathStyle: true,
  });
  const run: Run = { stack, s3, meter, ingest: emptyPhase(), retrieval: emptyPhase() };
  const tally = emptyTally();
  let summary: RunReport | null = null;
  let s3ByKeyClass: Record<string, number> = {};
  let storage: StorageUse = {
    dynamodbItems: 0,
    dynamodbBytes: 0,
    gsiBytes: 0,
    s3Objects: 0,
    s3Bytes: 0,
    taggedObjects: 0,
  };
  try {
    for (const file of files) await benchConversation(run, file, tally);
    summary = await stack.report();
    storage = await measureStorage(stack.info);
  } finally {
    s3ByKeyClass = Object.fromEntries(
      Object.entries(requestLedger.s3ByKeyClass())
        .map(([k, n]) => [k, n - (s3Before[k] ?? 0)])
        .filter(([, n]) => n !== 0),
    );
    s3.destroy();
    await stack.stop();
    logs.stop();
  }
  return qualityResult({ files, tally, run, summary, storage, logs, started, s3ByKeyClass });
}

/** One LoCoMo conversation: replay it, ask its questions, then score its annotated events. */
async function benchConversation(run: Run, file: string, tally: Tally): Promise<void> {
  const name = file.replace(/^.*\//, '').replace(/\.json$/, '');
  const conv = JSON.parse(readFileSync(file, 'utf8')) as Conversation;
  const userId = `locomo-${name}`;
  const turns = locomoToTurns(conv, { userId, source: `locomo/${name}` });
  tally.turns += turns.length;
  await replayConversation(run, turns, tally);

  const search = memorySearch(run.stack, userId);
  const raw = rawTurns(turns);
  for (const qa of conv.qa) await askQuestion(qa, raw, search, tally);
  const asked = run.meter.end(run.retrieval);
  tally.latencyRuns.search.push(asked.filter((i) => i.fn === 'api').map((i) => i.ms));

  const entries = await readDiaryEntries(run, userId, tally.diary);
  tally.diary.perTurnEntries += turns.length;
  await scoreEvents(conv, turns, entries, search, tally);
  run.meter.end(null);
}

/** Replays the turns on the stack's clock, drained, then the day after them (its nightly and weekly runs), drained. */
export async function replayWithNextDay(stack: LocalHarness, turns: readonly TurnSaved[]): Promise<void> {
  await stack.replayLines(
    turns.map((t) => JSON.stringify(t)),
    { clock: true },
  );
  await stack.waitUntilDrained();
  await stack.advanceTo(new Date(stack.now().getTime() + 24 * 3_600_000));
  await stack.waitUntilDrained();
}

/** Replays the turns on the stack's clock, then a day of sweeps; records signal and trigger → staged latencies. */
async function replayConversation(run: Run, turns: readonly TurnSaved[], tally: Tally): Promise<void> {
  const { stack, meter } = run;
  meter.end(null);
  await replayWithNextDay(stack, turns);
  const replayed = meter.end(run.ingest);
  tally.latencyRuns.signal.push(
    replayed.filter((i) => i.fn === 'signal' && i.records.length > 0).map((i) => i.ms / i.records.length),
  );
  tally.latencyRuns.trigger.push(
    replayed
      .filter((i) => i.fn === 'reflector')
      .flatMap((i) =>
        i.records.filter((r) => jobKind(r) === 'batch').map((r) => i.finishedAt - Number(r.attributes.SentTimestamp)),
      ),
  );
}

function memorySearch(stack: LocalHarness, userId: string): Search {
  return async (query, limit, filters) => {
    const res = await fetch(`${stack.info.apiUrl}/v1/users/${userId}/memory/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.info.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query, limit, ...(filters ? { filters } : {}) }),
    });
    if (!res.ok) throw new Error(`search answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { results: SearchHit[] }).results;
  };
}

/** The raw turns, by id and as the two BM25 floors (plain and stemmed) search them. */
function rawTurns(turns: readonly TurnSaved[]) {
  const byTurn = new Map<number, TurnSaved>(turns.map((t) => [t.turnId, t]));
  const diaOf = (ids: readonly number[]) =>
    new Set(ids.flatMap((id) => (byTurn.get(id)?.attributes?.dia_ids ?? '').split(' ').filter(Boolean)));
  const docs = turns.map((t) => ({ id: String(t.turnId), title: '', text: `${t.query}\n${t.response}` }));
  return { byTurn, diaOf, index: new KnowledgeSearch(docs), stemmed: new KnowledgeSearch(docs, { stem: true }) };
}
type RawTurns = ReturnType<typeof rawTurns>;

/** One QA item: adversarial ones count empty answers; the others score recall against the floors and count tokens. */
async function askQuestion(qa: Qa, raw: RawTurns, search: Search, tally: Tally): Promise<void> {
  if (typeof qa.question !== 'string' || qa.question.trim() === '') return;
  const floorHits = raw.index.search(qa.question, 10);
  if (qa.category === 5) {
    tally.adversarial.questions += 1;
    if ((await search(qa.question, 10)).length === 0) tally.adversarial.empty += 1;
    if (floorHits.length === 0) tally.adversarial.floorEmpty += 1;
    return;
  }
  const evidence = evidenceIds(qa);
  if (evidence.length === 0) return;
  tally.questions += 1;
  tally.byCategory[qa.category] = (tally.byCategory[qa.category] ?? 0) + 1;
  const results = await search(qa.question, 10);
  const m = recallAt(
    results.map((r) => raw.diaOf(r.sourceTurns)),
    evidence,
  );
  addRecall(tally.memory, m);
  const ofCategory = tally.memoryByCategory[qa.category] ?? emptyRecall();
  tally.memoryByCategory[qa.category] = ofCategory;
  addRecall(ofCategory, m);
  addRecall(
    tally.floor,
    recallAt(
      floorHits.map((h) => raw.diaOf([Number(h.doc.id)])),
      evidence,
    ),
  );
  addRecall(
    tally.stemmedFloor,
    recallAt(
      raw.stemmed.search(qa.question, 10).map((h) => raw.diaOf([Number(h.doc.id)])),
      evidence,
    ),
  );

  addTop10(tally.top10, results);
  const top5 = results.slice(0, 5);
  for (const r of top5) tally.kinds[r.kind] = (tally.kinds[r.kind] ?? 0) + 1;
  tally.tokens.memoryTop5 += top5.reduce((n, r) => n + estimateTokens(r.text), 0);
  const standFor = new Set(top5.flatMap((r) => r.sourceTurns));
  tally.tokens.rawTurnsTheyStandFor += [...standFor].reduce((n, id) => {
    const t = raw.byTurn.get(id);
    return n + (t ? estimateTokens(`${t.query}\n${t.response}`) : 0);
  }, 0);
  tally.tokens.floorTop5 += floorHits.slice(0, 5).reduce((n, h) => n + estimateTokens(h.doc.text), 0);
}

interface DiaryEntry {
  turns: Set<number>;
  words: Set<string>;
}

/** The user's batch logs in batch id order: in their DynamoDB items (batch-log-store.ts). */
async function batchLogs(run: Run, userId: string): Promise<BatchLog[]> {
  const { info } = run.stack;
  const ddb = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: info.region, credentials: info.credentials, endpoint: info.endpoints.dynamodb }),
  );
  try {
    const items = await queryAll(ddb, {
      TableName: info.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': keys.batchPrefix },
    });
    const logs = await Promise.all(items.map((i) => batchLogOf(run.s3, info.bucketName, i)));
    return logs.filter((l): l is BatchLog => l !== null);
  } finally {
    ddb.destroy();
  }
}

/** The user's diary records by batch id: an entry is its record (no S3 object). */
async function diaryRecords(run: Run, userId: string): Promise<Map<string, DiaryRecord>> {
  const { info } = run.stack;
  const ddb = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: info.region, credentials: info.credentials, endpoint: info.endpoints.dynamodb }),
  );
  try {
    const items = await queryAll(ddb, {
      TableName: info.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': keys.diaryPrefix },
    });
    return new Map(items.map((i) => [(i.entry as DiaryRecord).id, i.entry as DiaryRecord]));
  } finally {
    ddb.destroy();
  }
}

/** The diary's decisions, from the batch logs (counted into `diary`); its entries, rendered from their records. */
async function readDiaryEntries(run: Run, userId: string, diary: Tally['diary']): Promise<DiaryEntry[]> {
  const entries: DiaryEntry[] = [];
  const records = await diaryRecords(run, userId);
  for (const log of await batchLogs(run, userId)) {
    if (!log.diary) continue;
    diary.attempts += 1;
    for (const [criterion, evidence] of Object.entries(log.diary.criteria))
      if (evidence.length > 0) diary.byCriterion[criterion] = (diary.byCriterion[criterion] ?? 0) + 1;
    if (!log.diary.written || !log.diary.path) {
      const reason = log.diary.reason ?? '?';
      diary.rejected[reason] = (diary.rejected[reason] ?? 0) + 1;
      continue;
    }
    diary.written += 1;
    const record = records.get(log.batch_id);
    const text = record ? diaryMarkdown(record) : '';
    entries.push({ turns: new Set(log.turns_reviewed), words: new Set(contentWords(text)) });
  }
  return entries;
}

/** The conversation's annotated event sentences (`events_session_N`), each with its session's turn ids. */
function annotatedEvents(
  conv: Conversation,
  turns: readonly TurnSaved[],
): Array<{ sentence: string; own: Set<number> }> {
  const sessionTurns = new Map<string, Set<number>>();
  for (const t of turns) {
    const s = t.attributes?.session ?? '';
    if (!sessionTurns.has(s)) sessionTurns.set(s, new Set());
    sessionTurns.get(s)?.add(t.turnId);
  }
  const events: Array<{ sentence: string; own: Set<number> }> = [];
  for (const [key, value] of Object.entries(conv)) {
    const m = /^events_session_(\d+)$/.exec(key);
    if (!m || typeof value !== 'object' || value === null) continue;
    const own = sessionTurns.get(m[1] ?? '') ?? new Set<number>();
    const sentences = Object.entries(value as Record<string, unknown>)
      .filter(([speaker]) => speaker !== 'date')
      .flatMap(([, list]) => (Array.isArray(list) ? (list as string[]) : []));
    for (const sentence of sentences)
      if (typeof sentence === 'string' && sentence.trim() !== '') events.push({ sentence, own });
  }
  return events;
}

/**
 * Extraction coverage: each annotated event sentence, searched among staged and promoted
 * items; covered when one of the top 3 derives from a turn of that session. Diary coverage:
 * by session (an entry reviewed a turn of it) and by content (that entry shares words with it).
 */
async function scoreEvents(
  conv: Conversation,
  turns: readonly TurnSaved[],
  entries: readonly DiaryEntry[],
  search: Search,
  tally: Tally,
): Promise<void> {
  const { extraction, diary } = tally;
  for (const { sentence, own } of annotatedEvents(conv, turns)) {
    extraction.events += 1;
    const hits = await search(sentence, 3, { kind: ['staged', 'knowledge'] });
    if (hits.some((h) => h.sourceTurns.some((t) => own.has(t)))) extraction.covered += 1;
    diary.events += 1;
    const ofSession = entries.filter((e) => [...e.turns].some((t) => own.has(t)));
    if (ofSession.length > 0) diary.coveredBySession += 1;
    const words = contentWords(sentence);
    if (ofSession.some((e) => words.filter((w) => e.words.has(w)).length >= MIN_SHARED_WORDS))
      diary.coveredByContent += 1;
  }
}

/** The tallies as the report gives them: recall and coverage as shares, tokens as means per question. */
function qualityResult(end: {
  files: readonly string[];
  tally: Tally;
  run: Run;
  summary: RunReport | null;
  storage: StorageUse;
  logs: ReturnType<typeof captureLogBytes>;
  started: number;
  s3ByKeyClass: Record<string, number>;
}): QualityResult {
  const { tally, summary, storage, logs } = end;
  const { questions, adversarial, tokens, extraction, diary } = tally;
  const share = (n: number, d: number) => (d > 0 ? Math.round((n / d) * 1000) / 1000 : 0);
  const norm = (r: Recall, n = questions): Recall => ({
    any: { 1: share(r.any[1], n), 5: share(r.any[5], n), 10: share(r.any[10], n) },
    all: { 1: share(r.all[1], n), 5: share(r.all[5], n), 10: share(r.all[10], n) },
  });
  return {
    conversations: end.files.map((f) => f.replace(/^.*\//, '')),
    turns: tally.turns,
    questions,
    byCategory: tally.byCategory,
    memoryByCategory: Object.fromEntries(
      Object.entries(tally.memoryByCategory).map(([c, r]) => [c, norm(r, tally.byCategory[c] ?? 0)]),
    ),
    memory: norm(tally.memory),
    floor: norm(tally.floor),
    stemmedFloor: norm(tally.stemmedFloor),
    adversarial: {
      questions: adversarial.questions,
      emptyShare: share(adversarial.empty, adversarial.questions),
      floorEmptyShare: share(adversarial.floorEmpty, adversarial.questions),
    },
    tokens: {
      memoryTop5: Math.round(tokens.memoryTop5 / Math.max(1, questions)),
      rawTurnsTheyStandFor: Math.round(tokens.rawTurnsTheyStandFor / Math.max(1, questions)),
      floorTop5: Math.round(tokens.floorTop5 / Math.max(1, questions)),
    },
    extraction: { ...extraction, share: share(extraction.covered, extraction.events) },
    diary: { ...diary, reduction: share(diary.perTurnEntries - diary.written, diary.perTurnEntries) },
    kinds: tally.kinds,
    tierShareTop10: tierEntryShare(tally.top10),
    promotion: {
      staged: summary?.staged ?? 0,
      promoted: summary?.promoted ?? 0,
      per100Turns: share((summary?.promoted ?? 0) * 100, tally.turns),
    },
    usage: {
      ingest: end.run.ingest,
      retrieval: end.run.retrieval,
      sweepFires: summary?.sweepsFired ?? 0,
      records: summary ? summary.staged + summary.promoted + summary.findings + summary.summaries : 0,
      storedBytes: { dynamodb: storage.dynamodbBytes, s3: storage.s3Bytes },
      storage,
      logBytes: logs.bytes,
      metrics: [...logs.metrics].sort(),
      s3ByKeyClass: end.s3ByKeyClass,
    },
    latency: {
      signalMsPerTurn: spread(tally.latencyRuns.signal),
      triggerToStagedMs: spread(tally.latencyRuns.trigger),
      searchApiMs: spread(tally.latencyRuns.search),
    },
    seconds: Math.round((Date.now() - end.started) / 1000),
  };
}

/** The results in the top 10 of every question asked, and how many of them are tier entries. */
export interface Top10Tally {
  results: number;
  tierEntries: number;
}

/**
 * Counts a question's top 10 into `into`. A tier entry is an item of kind `memory` (a `mem:` id:
 * what the tier routes, memory.save and reflection write; lib/items/memory-item.ts KindSchema).
 */
export function addTop10(into: Top10Tally, results: ReadonlyArray<{ kind: string }>): void {
  const top10 = results.slice(0, 10);
  into.results += top10.length;
  into.tierEntries += top10.filter((r) => r.kind === 'memory').length;
}

/** Tier entries' share of the top-10 results counted (0 when none were), to three places. */
export const tierEntryShare = (t: Top10Tally): number =>
  t.results > 0 ? Math.round((t.tierEntries / t.results) * 1000) / 1000 : 0;

/** Content words an annotated event must share with a diary entry of its session to count as covered by content. */
const MIN_SHARED_WORDS = 2;

/** Bytes the stack holds: the table's size as DynamoDB reports it, and every object in the bucket. */
async function measureStorage(info: Awaited<ReturnType<typeof startHarness>>['info']): Promise<StorageUse> {
  const common = { region: info.region, credentials: info.credentials };
  const ddb = new DynamoDBClient({ ...common, endpoint: info.endpoints.dynamodb });
  const s3 = new S3Client({ ...common, endpoint: info.endpoints.s3, forcePathStyle: true });
  const table = await ddb.send(new DescribeTableCommand({ TableName: info.tableName }));
  let s3Bytes = 0;
  let s3Objects = 0;
  const turnDocs: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: info.bucketName, ContinuationToken: token }));
    for (const o of page.Contents ?? []) {
      s3Bytes += o.Size ?? 0;
      s3Objects += 1;
      // Only turn documents are tagged (lib/turns/dynamo-turn-store.adapter.ts).
      if (/^users\/[^/]+\/turns\//.test(o.Key ?? '')) turnDocs.push(o.Key ?? '');
    }
    token = page.NextContinuationToken;
  } while (token);
  ddb.destroy();
  s3.destroy();
  return {
    dynamodbItems: table.Table?.ItemCount ?? 0,
    dynamodbBytes: table.Table?.TableSizeBytes ?? 0,
    gsiBytes: (table.Table?.GlobalSecondaryIndexes ?? []).reduce((n, g) => n + (g.IndexSizeBytes ?? 0), 0),
    s3Objects,
    s3Bytes,
    taggedObjects: turnDocs.length,
  };
}

/**
 * Counts the bytes of the structured lines the functions write to stdout (Powertools logs and
 * EMF metrics, each naming its `service`, a dimension of neither) until stopped, by service, and keeps them off the
 * terminal; other output passes through.
 */
function captureLogBytes(): { bytes: Record<string, number>; metrics: Set<string>; stop: () => void } {
  const bytes: Record<string, number> = {};
  /** The custom metrics the EMF lines define: `name{dimensions}` (each a metric CloudWatch bills by the month, whoever emits it). */
  const metrics = new Set<string>();
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    let kept = '';
    for (const line of text.split('\n')) {
      const service = line.startsWith('{') ? /"service":"([^"]+)"/.exec(line)?.[1] : undefined;
      if (service) bytes[service] = (bytes[service] ?? 0) + Buffer.byteLength(line, 'utf8') + 1;
      if (service && line.includes('"_aws"')) {
        const emf = JSON.parse(line) as {
          _aws?: { CloudWatchMetrics?: Array<{ Dimensions?: string[][]; Metrics?: Array<{ Name?: string }> }> };
        };
        // A metric is its name and dimension values (the stage is one here): one per dimension set.
        for (const d of emf._aws?.CloudWatchMetrics ?? [])
          for (const m of d.Metrics ?? [])
            for (const dims of d.Dimensions ?? [[]]) metrics.add(`${m.Name}{${dims.join(',')}}`);
      } else if (line.length > 0) kept += `${line}\n`;
    }
    return kept.length > 0 ? (write as (c: string, ...r: unknown[]) => boolean)(kept, ...rest) : true;
  }) as typeof process.stdout.write;
  const stop = () => {
    process.stdout.write = write;
  };
  return { bytes, metrics, stop };
}

export const LOCOMO_FILES = ['conv-26.json', 'conv-30.json', 'conv-41.json', 'conv-42.json', 'conv-43.json'];

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, dir: { type: 'string' } },
    strict: true,
  });
  const dir = values.dir ?? process.env.LOCOMO_DIR ?? new URL('../../shared/data/locomo/', import.meta.url).pathname;
  const files = (values.quick ? LOCOMO_FILES.slice(0, 1) : LOCOMO_FILES).map((f) => join(dir, f));
  printReport(benchLocomoQuality(files));
}
