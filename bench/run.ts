/**
 * npm run bench — runs the benchmarks and writes BENCHMARKS.md. Speed and cost goals are
 * checked here, not by timed assertions in tests.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { AttackReport } from './api-attacks.js';
import { differenceLines, type EquivalenceReport } from '../infra/local/fault-equivalence.js';
import type { FuzzReport } from './fuzz.js';
import { LEAK_BOUND_BYTES_PER_TURN, type LoadReport, SETTLE_ROUNDS } from './load.js';
import type { QualityResult } from './locomo-quality.js';
import type { RedactionReport } from './redaction.js';
import type { ForgetReport } from './forget.js';
import type { MessyReport } from './messy.js';
import { barChart } from './svg.js';
import { benchSearchLatency, byMemory, PROJECTED_MEMORY_MB } from './search-latency.js';
import { benchColdStart } from './cold-start.js';
import { benchReflectorTime } from './reflector-time.js';
import { benchSignalWrites } from './signal-writes.js';
import { costSection } from './cost-section.js';
import { stageConfig } from '../infra/config/stages.js';

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

/** A benchmark script in its own process (one local harness per process); its last line is its result as JSON. */
function runScript<T>(script: string, args: readonly string[] = []): T {
  const tsx = new URL('../node_modules/.bin/tsx', import.meta.url).pathname;
  const res = spawnSync(tsx, [new URL(script, import.meta.url).pathname, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 60 * 60_000,
  });
  if (res.status !== 0) throw new Error(`${script} failed (exit ${res.status})`);
  return JSON.parse(res.stdout.trim().split('\n').at(-1) ?? 'null') as T;
}

/** A script whose last stdout line is its report, even when it exits 1 (its check failed). */
function runReport<T>(script: string, args: readonly string[] = []): T {
  const res = spawnSync(TSX, [new URL(script, import.meta.url).pathname, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 90 * 60_000,
  });
  return reportOf<T>(script, res.status, res.stdout);
}

/** runReport without blocking, so that several run at once. */
function runReportInBackground<T>(script: string, args: readonly string[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, [new URL(script, import.meta.url).pathname, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 90 * 60_000,
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve(reportOf<T>(script, code, out));
      } catch (error) {
        reject(error);
      }
    });
  });
}

const TSX = new URL('../node_modules/.bin/tsx', import.meta.url).pathname;
const reportOf = <T>(script: string, status: number | null, stdout: string): T => {
  if (status !== 0 && status !== 1) throw new Error(`${script} failed (exit ${status})`);
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null') as T;
};

/**
 * The commit the benchmarks ran at, marked when the tree had uncommitted changes. What the
 * benchmarks write themselves (BENCHMARKS.md, the plots) does not count: a section run after
 * another in the same tree runs the same code.
 */
function commitStamp(): string {
  const git = (args: string[]) => spawnSync('git', args, { encoding: 'utf8' }).stdout.trim();
  const head = git(['rev-parse', '--short', 'HEAD']) || 'unknown';
  const changed = git([
    'status',
    '--porcelain',
    '--untracked-files=no',
    '--',
    '.',
    ':(exclude)BENCHMARKS.md',
    ':(exclude)bench/plots',
  ]);
  return changed ? `${head} + uncommitted changes` : head;
}

/** The sustained-throttling replays: what was refused, what it left. */
function sustainedRows(reports: EquivalenceReport[]): string {
  const rows = reports.flatMap((r) =>
    r.sustained
      ? [
          `| ${r.replay.split('/').at(-1)} | ${r.sustained.minutes} | ${r.sustained.throttled} | ${r.sustained.dlq} | **${r.sustained.differences}** | ${r.seconds.sustained?.toFixed(0) ?? '?'} |`,
        ]
      : [],
  );
  return [
    '| conversation | simulated minutes throttled | model calls refused | left in DLQs | differences vs fault-free | seconds |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

/** Fault equivalence at LoCoMo scale: one conversation per run of four replays. */
function faultSection(reports: EquivalenceReport[]): string {
  const kinds = Object.keys(reports[0]?.faults ?? {}) as Array<keyof EquivalenceReport['faults']>;
  const rows = reports.map(
    (r) =>
      `| ${r.replay.split('/').at(-1)} | ${r.turns} | ${r.records.toLocaleString('en-US')} | ${kinds.map((k) => r.faults[k]).join(' | ')} | ${r.handlerErrors} | ${r.dlq} | **${r.determinism.differences}** | **${r.equivalence.differences}** | ${r.seconds.faultFree.toFixed(0)} / ${r.seconds.faulty.toFixed(0)} |`,
  );
  const diffs = reports.flatMap((r) =>
    [...r.determinism.sample, ...r.equivalence.sample, ...(r.sustained?.sample ?? [])].map(
      (d) => `- ${r.replay.split('/').at(-1)}: ${d.where} \`${d.key}\` ${d.kind}${d.path ? ` at ${d.path}` : ''}`,
    ),
  );
  return `## Reliability: the same state under faults

\`npm run faults\` (\`infra/local/fault-equivalence.ts\`; a smaller run is a test): each
conversation is replayed on fresh local harnesses — fault-free twice (determinism) and
with faults at rate ${reports[0]?.rate ?? '?'} (seed ${reports[0]?.seed ?? '?'}) — and the canonical dumps of the user's state
(every DynamoDB item of the user, every S3 object under \`users/{id}/\`; durations, times of
processing and SQS message tags masked: \`infra/local/state-dump.ts\`) are compared. Faults
(\`infra/local/fault-injection.ts\`) strike first deliveries: SDK calls throttled, 5xx, or timed
out after the request was sent (the write happened, the answer was lost); model calls
throttled or answered with garbage; invocations dying after a random number of calls (the
whole batch returns to the queue). Simulated clock at speed ${reports[0]?.speed ?? 60} (idle window 5 s, longer
than a turn's 2 s redelivery, as 5 min is longer than 3 min in the cloud).

| conversation | turns | records compared | ${kinds.join(' | ')} | handler errors retried | left in DLQs | differences, fault-free twice | differences, faults vs fault-free | seconds (fault-free / faults) |
| --- | ---: | ---: | ${kinds.map(() => '---:').join(' | ')} | ---: | ---: | ---: | ---: | ---: |
${rows.join('\n')}
${diffs.length > 0 ? `\nFirst differences:\n${diffs.join('\n')}\n` : ''}
A fourth replay runs in sustained mode: every model call throttled for ${reports[0]?.sustained?.minutes ?? '?'} simulated minutes
from the first, on every delivery and every attempt (a Bedrock quota exhausted, as a nightly
fan-out meets it); the SDK's retries and the job queue's five deliveries must outlast it.

${sustainedRows(reports)}

A fault that outlasts the retries (a model outage longer than a job's five deliveries) parks
the job in its DLQ with an aborted log naming the reason; \`npm run redrive\` sends it back
once the cause is fixed (a test runs this outage).
`;
}

/** The selective diary (req R-DIARY) on the LoCoMo replay. */
function diarySection(quality: QualityResult): string {
  const d = quality.diary;
  const criteria =
    Object.entries(d.byCriterion)
      .map(([c, n]) => `${c.replace('_', ' ')} ${n}`)
      .join(', ') || 'none';
  const rejected =
    Object.entries(d.rejected)
      .map(([r, n]) => `${n} × "${r}"`)
      .join('; ') || 'none';
  return `## Selective diary (req R-DIARY)

On the same LoCoMo replay (${quality.conversations.join(', ')}): a per-turn diary would have written
${d.perTurnEntries.toLocaleString('en-US')} entries (one per turn). The reflector considered ${d.attempts} (one per completed batch)
and wrote **${d.written}** — a reduction of **${pct(d.reduction)}** (the seed's goal: more than 70 %). Criteria met by
the batches considered: ${criteria}. Rejected attempts, with the reason kept in the batch log:
${rejected}. The rules are in \`lib/diary/diary.ts\`; the offline model is rule-based, so which
criteria fire here says more about it than about an LLM's reflections.

Nothing important lost? Of the ${d.events} annotated session events (LoCoMo's \`events_session_N\`),
${d.coveredBySession} (${pct(d.events > 0 ? d.coveredBySession / d.events : 0)}) fall in a session a diary entry reviewed a turn of, and
${d.coveredByContent} (${pct(d.events > 0 ? d.coveredByContent / d.events : 0)}) share at least two content words with such an entry.
`;
}

/** Hostile input: the fuzzed schemas, queue paths and API routes, and the prompt-injection attack on the stack. */
function fuzzSection(fuzz: FuzzReport): string {
  const rows = Object.entries(fuzz.targets).map(([name, t]) => {
    const outcomes = Object.entries(t.outcomes)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    return `| ${name} | ${t.cases.toLocaleString('en-US')} | **${t.failures}** | ${outcomes} |`;
  });
  const stack = fuzz.injection.stack;
  const stackText = stack
    ? `On the local harness (\`bench/prompt-injection.ts\`): ${stack.attackerTurns} attacker turns through the real handlers,
${stack.modelCalls} model calls answered by a model that obeys the attacker (${Object.entries(stack.hostileAnswers)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}),
${stack.batches.completed} batches completed and ${stack.batches.aborted} aborted, ${stack.staged} items staged, ${stack.summaries} summaries,
${stack.nightlyRuns} nightly and ${stack.weeklyRuns} weekly runs; then ${stack.api.requests} fuzzed requests to the memory API over HTTP
(${Object.entries(stack.api.byStatus)
        .map(([k, n]) => `${k}: ${n}`)
        .join(
          ', ',
        )}). Failed checks: **${stack.failures.length}**${stack.failures.length > 0 ? ` — ${stack.failures.slice(0, 5).join('; ')}` : ''}
(a check fails when a handler throws, a key is written outside the attacker's prefix, the
victim's memory changes or leaks into an answer, a batch outgrows the caps, or a message
reaches a DLQ).`
    : 'The stack run was skipped (`--no-stack`).';
  return `## Hostile input: fuzzing and prompt injection

\`bench/fuzz.ts\` (fast-check; fewer cases run in \`npm test\`): every event schema through the
function that reads it (the signal function's record path with claim checks, the reflector,
the idle and sweep functions) and every route of the memory API in process, with hostile
values in every field — wrong types, missing and extra fields, edge numbers and times, odd
unicode (lone surrogates, RTL overrides, zero-width and combining runs), path tricks, other
users' ids, oversized strings. A case fails when a handler throws, writes outside the
user's prefix, changes another user's memory, or rejects without naming the field that
made it fail. Seed ${fuzz.seed}; ${(fuzz.ms / 1000).toFixed(0)} s.

| target | cases | failures | outcomes (most frequent) |
| --- | ---: | ---: | --- |
${rows.join('\n')}
| **total** | **${fuzz.cases.toLocaleString('en-US')}** | **${fuzz.failures}** | |

${stackText}
`;
}

/** Load: concurrent sessions on the local harness, turns lost or doubled, heap per round. */
function loadSection(load: LoadReport): string {
  const h = load.heap;
  const heapRows = h.rounds.map(
    (r, i) =>
      `| ${r.round} | ${load.perRound[i]?.turnsPublished ?? ''} | ${load.perRound[i]?.lost ?? ''} | ${load.perRound[i]?.doubled ?? ''} | ${load.turnsPerSecond[i]?.toFixed(0) ?? ''} | ${load.signalLatencyMs[i]?.p50 ?? ''} / ${load.signalLatencyMs[i]?.p95 ?? ''} | ${r.heapUsedMB.toFixed(1)} | ${r.rssMB.toFixed(0)} |`,
  );
  return `## Load: ${load.sessions} concurrent sessions

\`bench/load.ts\` (a small round is a test): ${load.sessions} sessions publish ${load.turnsPerSession} LoCoMo turns each at
once, interleaved, against the local harness (the real handlers on the emulators, one process);
${load.users} users, ${load.sharedUsers} of them with two sessions open at once (their turns share a FIFO group and
a signal state and may arrive out of order). A tenth of the turns are published again with a
fresh deduplication id (the handler must count them as duplicates), a twentieth again with
the same id (SQS must drop them). After each round every published (user, turn) must have
exactly one turn-index entry with its content hash and one turn document. ${load.rounds} rounds after a
warm-up, fresh users each; heap after a forced GC.

| round | turns | lost | doubled | turns / s | signal latency p50 / p95 ms | heap used after GC MB | RSS MB |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${heapRows.join('\n')}

In all: ${load.turnsPublished.toLocaleString('en-US')} turns published, ${load.turnsStored.toLocaleString('en-US')} stored once; lost **${load.lost}**, doubled **${load.doubled}**;
${load.republished} republished with a fresh id and ${load.duplicatesCounted} duplicates counted; ${load.sqsDuplicatesDropped} dropped by SQS; ${load.late} late;
${load.handlerErrors} handler errors; ${load.dlq} in DLQs. Heap used after GC: ${h.before?.heapUsedMB.toFixed(1) ?? '?'} MB before the first round,
${h.after?.heapUsedMB.toFixed(1) ?? '?'} MB after the last (${h.growthPerRoundMB} MB per round by least squares, the last round
${h.lastRoundGrowthMB >= 0 ? '+' : ''}${h.lastRoundGrowthMB} MB). The handlers share the process with the emulators: fauxqs keeps each FIFO
queue's deduplication ids for SQS's 5-minute window, one record per message (heap
snapshots of rounds 4 and 7: about one new 64-hex id, UUID and time per message), so the
heap grows until that window turns over.

${leakLine(load)}

Signal latency (publication → the signal function returned)
is mostly queueing: locally one poller per queue, and fauxqs hands out one message per FIFO
group per receive; Lambda runs more pollers and batches of up to 10.
`;
}

/** The LoCoMo replay, once per run: the locomo and cost sections read the same one. */
const replays = new Map<boolean, QualityResult>();
const runQuality = (quick: boolean): QualityResult => {
  const done = replays.get(quick) ?? runScript<QualityResult>('./locomo-quality.ts', quick ? ['--quick'] : []);
  replays.set(quick, done);
  return done;
};

const pct = (n: number) => `${(n * 100).toFixed(1)} %`;
const points = (n: number) => `${n >= 0 ? '+' : '−'}${Math.abs(n * 100).toFixed(1)}`;
const margin = (a: QualityResult['memory'], b: QualityResult['memory']) =>
  `${points(a.any[5] - b.any[5])} / ${points(a.any[10] - b.any[10])} points any@5 / any@10, ${points(a.all[5] - b.all[5])} / ${points(a.all[10] - b.all[10])} all@5 / all@10`;

/** Latency of the replay: signal time per turn, trigger → staged, search through the API. */
function latencySection(quality: QualityResult): string {
  const row = (name: string, s: QualityResult['latency']['signalMsPerTurn']) =>
    `| ${name} | ${s.samples} | ${s.median.toFixed(1)} | ${s.p95.toFixed(1)} | ${s.runMedians.length > 0 ? `${Math.min(...s.runMedians).toFixed(1)}–${Math.max(...s.runMedians).toFixed(1)}` : '–'} |`;
  return `## Latency in the replay

Wall-clock times of the very same handlers during the LoCoMo replay, against the local
emulators (DynamoDB Local, fauxqs) on this machine: spreads are over all samples and over
the ${quality.conversations.length} conversation(s) replayed (one run each; the range is of the per-run medians).
"Trigger → staged" is from the job's send (the signal function's decision) to the
reflector's return, offline model: queue wait, the local poller's receive and the reflector.

| what | samples | median ms | p95 ms | per-run medians ms |
| --- | ---: | ---: | ---: | ---: |
${row('signal handler time per turn', quality.latency.signalMsPerTurn)}
${row('trigger → staged (batch reflections)', quality.latency.triggerToStagedMs)}
${row('memory.search through the API (handler)', quality.latency.searchApiMs)}
`;
}

/** What a section printed and its figures (its `--only` run prints the figures as the last line). */
interface SectionResult {
  md: string;
  json: Record<string, unknown>;
  log: string[];
}

interface Section {
  name: string;
  run(quick: boolean): Promise<SectionResult>;
}

const locomoDir = () => process.env.LOCOMO_DIR ?? new URL('../../shared/data/locomo/', import.meta.url).pathname;

async function signalWritesSection(): Promise<SectionResult> {
  const writes = await benchSignalWrites();
  const writeGoal = 1.2;
  const worst = Math.max(...writes.map((r) => r.ddbWriteRequests));
  const table = [
    '| scenario | turns | DynamoDB write requests / turn | write units / turn | DynamoDB reads / turn | S3 PUTs / turn | SQS sends / turn |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...writes.map(
      (r) =>
        `| ${r.scenario} | ${r.turns} | ${fmt(r.ddbWriteRequests)} | ${fmt(r.ddbWriteUnits)} | ${fmt(r.ddbReadRequests)} | ${fmt(r.s3Puts)} | ${fmt(r.sqsSends)} |`,
    ),
  ].join('\n');
  const md = `## Signal ingestion: AWS requests per turn

The signal function invoked with full 10-record SQS batches (as Lambda's FIFO event source
delivers them). Requests are counted by an SDK middleware on the handler's own clients
(\`infra/local/request-ledger.ts\`); write units are DynamoDB Local's ConsumedCapacity.
Per SQS batch: one BatchWriteItem for the turn index and the turns' search-index change marks
(all users together), one for the activity markers of users whose day is new
(docs/data-model.md), and per user one conditional PutItem for the signal state.
Goal: ≤ ${writeGoal} DynamoDB write requests per turn.

${table}

Worst case: ${fmt(worst)} write requests per turn — ${worst <= writeGoal ? 'within' : 'over'} the goal of ${writeGoal}.
Write units count items one by one (a BatchWriteItem is one request but one unit per item:
a turn's index entry and its change mark) plus the state item, and on a user's first turn of a
day its activity marker and the marker's GSI entry (the state item itself has no GSI entry).
`;
  return {
    md,
    json: { worstWriteRequestsPerTurn: worst, rows: writes },
    log: [table, `worst case ${fmt(worst)} DynamoDB write requests per turn (goal ≤ ${writeGoal})`],
  };
}

async function reflectorTimeSection(): Promise<SectionResult> {
  const times = await benchReflectorTime();
  const goal = 100;
  const at1000 = times.find((r) => r.docs === 1000);
  const table = [
    '| Knowledge documents | batches | p50 ms | p95 ms | max ms |',
    '| ---: | ---: | ---: | ---: | ---: |',
    ...times.map(
      (r) => `| ${r.docs} | ${r.batches} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.max.toFixed(1)} |`,
    ),
  ].join('\n');
  const md = `## Reflector: non-LLM time per batch

\`runReflection\` on a 10-turn batch with in-memory stores and a model that answers at once,
so the figure is the reflector's own work: parsing the Knowledge snapshot, building the
search index, the BM25 search for existing knowledge, assembly, caps, the five gates, the
recurrence check, staging and the log. Storage round trips are not included.
Goal: ≤ ${goal} ms p95 at 1,000 documents.

${table}

At 1,000 documents: p95 ${at1000 ? at1000.p95.toFixed(1) : '?'} ms — ${at1000 && at1000.p95 <= goal ? 'within' : 'over'} the goal.
`;
  return { md, json: { p95MsAt1000: at1000?.p95 ?? null, rows: times }, log: [table] };
}

async function coldStartSection(quick: boolean): Promise<SectionResult> {
  const cold = await benchColdStart(quick ? 3 : 7);
  const kb = (bytes: number) => Math.round((bytes / 1024) * 10) / 10;
  const ms = (n: number) => Math.round(n * 10) / 10;
  const table = [
    '| function | bundle KB | source map KB | init ms (median) | init ms (max) |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...cold.map(
      (r) =>
        `| ${r.fn} | ${(r.bundleBytes / 1024).toFixed(0)} | ${(r.sourceMapBytes / 1024).toFixed(0)} | ${r.initMsMedian.toFixed(0)} | ${r.initMsMax.toFixed(0)} |`,
    ),
  ].join('\n');
  const range = (f: (r: (typeof cold)[number]) => number) =>
    `${Math.min(...cold.map(f)).toFixed(0)}–${Math.max(...cold.map(f)).toFixed(0)}`;
  const md = `## Cold start: bundle size and init time

Each function bundled by the \`MemoryFunction\` construct itself (CDK's NodejsFunction running the
local esbuild with our options: one CommonJS file for node22, minified, the AWS SDK bundled in,
the modules of \`LEFT_OUT_MODULES\` left out, the SDK's credential chain as the environment's
credentials alone, a source map without the sources' text), then
loaded with \`require()\` as the Lambda runtime loads a \`.js\` handler, in a fresh Node ${process.version} process on this machine, with the function's environment
as the stack sets it, \`NODE_OPTIONS=--enable-source-maps\` included (Node reads the map while
loading the bundle): the time to load the module and run its module scope (SDK clients,
configuration, Powertools), ${quick ? 3 : 7} processes each. Not in it: Lambda's own start (the runtime's
bootstrap, unpacking the code), its Node 22, and the CPU share of a 256 MB function.
Goal: ≤ 1,024 KB and ≤ 150 ms.

${table}

Bundles: ${cold.every((r) => r.bundleBytes <= 1024 * 1024) ? 'all within 1,024 KB' : 'over 1,024 KB for some'} (${range((r) => r.bundleBytes / 1024)} KB). Init: ${cold.every((r) => r.initMsMedian <= 150) ? 'all within 150 ms' : 'over 150 ms for some'} (medians ${range((r) => r.initMsMedian)} ms).
`;
  return {
    md,
    json: {
      functions: Object.fromEntries(
        cold.map((r) => [r.fn, { bundleKb: kb(r.bundleBytes), initMsMedian: ms(r.initMsMedian) }]),
      ),
    },
    log: [table],
  };
}

async function searchLatencySection(quick: boolean): Promise<SectionResult> {
  const rows = await benchSearchLatency(locomoDir(), quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]);
  const goals = { p95At10k: 50, p95At100k: 150, coldAt100k: 1_000, lambdaP95At100k: 150 };
  const memoryMb = stageConfig('bench').memoryMb.api;
  writeFileSync(
    new URL('./plots/search-latency.svg', import.meta.url),
    barChart({
      title: 'memory.search p95 by corpus size, one user (cold bars cut at 600 ms)',
      categories: rows.map((r) => `${r.items.toLocaleString('en-US')} items`),
      series: [
        { name: 'now: persisted index, warm (p95)', values: rows.map((r) => r.p95) },
        { name: 'now: cold container (first search)', values: rows.map((r) => Math.min(600, r.coldMs)) },
      ],
      yLabel: 'milliseconds',
      format: (n) => n.toFixed(0),
    }),
  );
  const table = [
    `| items of one user | warm searches | p50 ms | p95 ms | CPU ms per search (median) | p95 ms projected at ${memoryMb} MB (at ${PROJECTED_MEMORY_MB.join(' / ')} MB) | cold ms (first search of a new container) | DynamoDB read units per search | the three requests alone: p50 / p95 ms |`,
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.items.toLocaleString('en-US')} | ${r.queries} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.cpuMsPerSearch.toFixed(1)} | ${r.lambdaP95Ms.toFixed(1)} (${PROJECTED_MEMORY_MB.map((mb) => (r.lambdaP95MsByMemoryMb[mb] ?? 0).toFixed(0)).join(' / ')}) | ${r.coldMs.toFixed(0)} | ${r.readUnitsPerSearch.toFixed(1)} | ${r.floorP50.toFixed(1)} / ${r.floorP95.toFixed(1)} |`,
    ),
  ].join('\n');
  const at = (n: number) => rows.find((r) => r.items === n);
  const verdict = (v: number | undefined, goal: number, what: string) =>
    v === undefined
      ? `${what}: not run`
      : `${what} ${v.toFixed(0)} ms — ${v <= goal ? 'within' : 'over'} the goal of ${goal} ms`;
  const json = {
    items: rows.map((r) => r.items),
    p50Ms: rows.map((r) => Math.round(r.p50 * 10) / 10),
    p95Ms: rows.map((r) => Math.round(r.p95 * 10) / 10),
    coldMs: rows.map((r) => Math.round(r.coldMs)),
    readUnitsPerSearch: rows.map((r) => Math.round(r.readUnitsPerSearch * 100) / 100),
    floorP50Ms: rows.map((r) => Math.round(r.floorP50 * 10) / 10),
    floorP95Ms: rows.map((r) => Math.round(r.floorP95 * 10) / 10),
    cpuMsPerSearch: rows.map((r) => Math.round(r.cpuMsPerSearch * 10) / 10),
    lambdaP95Ms: rows.map((r) => Math.round(r.lambdaP95Ms * 10) / 10),
    lambdaP95MsByMemoryMb: byMemory(rows),
    apiMemoryMb: memoryMb,
  };
  const md = `## memory.search latency by corpus size

\`bench/search-latency.ts\`: one user's memory items (LoCoMo dialog lines cycled to the size)
and their search index as a compaction leaves it (one segment, lib/search/search-index.ts),
searched through the real api handler on the local harness (HTTP, token, IAM-enforced clients,
DynamoDB Local, the S3 emulator) with LoCoMo questions, limit 10. Warm: the container has the
segment; each search reads the pointer, then the change marks from its watermark (both
consistent), ranks, and reads the page's items. Cold: a new container's first search, segment download and load included (median
of 3). Read units: DynamoDB's consumed capacity per warm search, the user's and GLOBAL's reads
together. The three requests alone: the pointer GetItem, the marks Query and a BatchGetItem of
10 items, in a row, straight from the SDK (no handler, no HTTP): DynamoDB Local's own floor
for a warm search on this machine. CPU: the process's CPU time while the handler ran (one
search at a time; DynamoDB Local is another process). Projected: each warm search with its
CPU part stretched by 1,769 ÷ ${memoryMb}, the api function's share of a core (Lambda gives one vCPU
at 1,769 MB, https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html), its
waiting part as measured; this machine's core taken as Lambda's.
Goals: p95 ≤ ${goals.p95At10k} ms at 10,000 and
≤ ${goals.p95At100k} ms at 100,000 warm (measured, and projected at the api's memory size), cold ≤ ${goals.coldAt100k} ms at 100,000, read units that do not grow with the corpus.

${table}

![search latency](bench/plots/search-latency.svg)

${verdict(at(10_000)?.p95, goals.p95At10k, 'p95 at 10,000')}; ${verdict(at(100_000)?.p95, goals.p95At100k, 'p95 at 100,000')}; ${verdict(at(100_000)?.lambdaP95Ms, goals.lambdaP95At100k, `p95 at 100,000 projected at ${memoryMb} MB`)}; ${verdict(at(100_000)?.coldMs, goals.coldAt100k, 'cold at 100,000')}.
`;
  return { md, json, log: [table] };
}

/** The retrieval goals on the dev conversations. */
const QUALITY_GOALS = [
  { label: 'any@10', of: 'any', k: 10, goal: 0.87 },
  { label: 'all@10', of: 'all', k: 10, goal: 0.75 },
  { label: 'any@5', of: 'any', k: 5, goal: 0.8 },
] as const;

async function locomoSection(quick: boolean): Promise<SectionResult> {
  const quality = runQuality(quick);
  writeRecallPlot(quality);
  const table = recallTable(quality);
  return { md: locomoMarkdown(quality, quick, table), json: locomoJson(quality), log: [table] };
}

/** bench/plots/recall-at-k.svg: memory.search's "any" recall@k beside the two BM25 floors. */
function writeRecallPlot(quality: QualityResult): void {
  mkdirSync(new URL('./plots/', import.meta.url), { recursive: true });
  writeFileSync(
    new URL('./plots/recall-at-k.svg', import.meta.url),
    barChart({
      title: `Evidence recall@k ("any") on LoCoMo, ${quality.conversations.length} conversation(s)`,
      categories: ['@1', '@5', '@10'],
      series: [
        { name: 'memory.search', values: [quality.memory.any[1], quality.memory.any[5], quality.memory.any[10]] },
        {
          name: 'BM25 over raw turns (floor)',
          values: [quality.floor.any[1], quality.floor.any[5], quality.floor.any[10]],
        },
        {
          name: 'BM25 + stemming over raw turns',
          values: [quality.stemmedFloor.any[1], quality.stemmedFloor.any[5], quality.stemmedFloor.any[10]],
        },
      ],
      yMax: 1,
      yLabel: 'share of questions',
      format: (n) => n.toFixed(2),
    }),
  );
}

function recallTable(quality: QualityResult): string {
  return [
    '| | any@1 | any@5 | any@10 | all@1 | all@5 | all@10 |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...(
      [
        ['memory.search', quality.memory],
        ['BM25 over raw turns (floor)', quality.floor],
        ['BM25 + Porter stemming over raw turns', quality.stemmedFloor],
      ] as const
    ).map(
      ([name, r]) =>
        `| ${name} | ${pct(r.any[1])} | ${pct(r.any[5])} | ${pct(r.any[10])} | ${pct(r.all[1])} | ${pct(r.all[5])} | ${pct(r.all[10])} |`,
    ),
  ].join('\n');
}

function locomoMarkdown(quality: QualityResult, quick: boolean, table: string): string {
  return `## Memory quality on LoCoMo

${quality.conversations.join(', ')}${quick ? ' (`--quick`: the first conversation only)' : ''}: ${quality.turns} turns replayed through the
local harness with the offline model (rule-based, not an LLM) and the simulated clock, then
${quality.questions} questions of categories 1–4 (${Object.entries(quality.byCategory)
    .map(([c, n]) => `cat ${c}: ${n}`)
    .join(', ')}) asked through
\`POST /v1/users/{u}/memory/search\` (limit 10). A result covers the LoCoMo dialogs of its
\`sourceTurns\` (the turns' \`attributes.dia_ids\`); "any" = one evidence dialog in the top k,
"all" = every one. The floor, measured in the same run: plain BM25 (MiniSearch) over the raw
turns. Run time ${quality.seconds} s.

${table}

![recall@k](bench/plots/recall-at-k.svg)

${QUALITY_GOALS.map((g) => `${g.label} ${pct(quality.memory[g.of][g.k])} — ${quality.memory[g.of][g.k] >= g.goal ? 'within' : 'short of'} the goal of ${pct(g.goal)}`).join('; ')}.

By category (LoCoMo's: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop):

| category | questions | any@5 | any@10 | all@10 |
| --- | ---: | ---: | ---: | ---: |
${Object.entries(quality.memoryByCategory)
  .map(
    ([c, r]) => `| ${c} | ${quality.byCategory[c] ?? 0} | ${pct(r.any[5])} | ${pct(r.any[10])} | ${pct(r.all[10])} |`,
  )
  .join('\n')}

Margin over the floor: ${margin(quality.memory, quality.floor)}. Over BM25 with the same
stemming memory.search uses: ${margin(quality.memory, quality.stemmedFloor)} — what the derived items
(summaries, staged and promoted knowledge) and the ranking add beyond the stemmer.

- Tokens per question, top 5: memory ${quality.tokens.memoryTop5} vs ${quality.tokens.rawTurnsTheyStandFor} for the raw turns those results stand for (floor's top 5: ${quality.tokens.floorTop5}).
- Kinds in memory's top 5: ${Object.entries(quality.kinds)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')}; tier entries (kind \`memory\`) are ${pct(quality.tierShareTop10)} of the top 10.
- Promotion: ${quality.promotion.promoted} documents promoted to Knowledge/ (${quality.promotion.staged} still staged) by the end of the replays, ${quality.promotion.per100Turns} per 100 turns (the offline model words a recurring fact the same way each time; an LLM will not).
- Category 5 (adversarial, ${quality.adversarial.questions} questions): search returned nothing for ${pct(quality.adversarial.emptyShare)} (floor: ${pct(quality.adversarial.floorEmptyShare)}).
- Extraction coverage: ${quality.extraction.covered} of ${quality.extraction.events} annotated session events (${pct(quality.extraction.share)}) have a staged or promoted item from their session among the top 3 when searched for.

${latencySection(quality)}
${diarySection(quality)}`;
}

/** The section's fields in the last line's JSON. */
function locomoJson(quality: QualityResult) {
  return {
    anyAt: quality.memory.any,
    allAt: quality.memory.all,
    floorAnyAt: quality.floor.any,
    tokensTop5: quality.tokens.memoryTop5,
    tierShareTop10: quality.tierShareTop10,
    promotionsPer100Turns: quality.promotion.per100Turns,
    byCategory: Object.fromEntries(
      Object.entries(quality.memoryByCategory).map(([c, r]) => [
        c,
        { questions: quality.byCategory[c] ?? 0, anyAt: r.any, allAt: r.all },
      ]),
    ),
    diary: { written: quality.diary.written, perTurn: quality.diary.perTurnEntries },
  };
}

async function attacksSection(): Promise<SectionResult> {
  const attacks = runScript<AttackReport>('./api-attacks.ts');
  const md = `## Security: attack suite against the memory API

\`bench/api-attacks.ts\` (also a test) against the local API: a caller holding a token for one
user tries every route of the contract on another user's id and writes on GLOBAL, path tricks
on the user id (encoded slashes and dots, NUL, case, homoglyphs, lists, wildcards), body tricks
(another user in the body or filters, paths climbing out of the user's prefix, GLOBAL through
the body, promoting its own entry to GLOBAL), and forged, expired, unsigned (\`alg: none\`),
tampered or foreign-issuer tokens. An attack succeeds when the API answers 2xx for a user other
than the caller's own, or when any answer holds the victim's secret word.

| kind | tried |
| --- | ---: |
${Object.entries(attacks.byKind)
  .map(([k, n]) => `| ${k} | ${n} |`)
  .join('\n')}
| **total** | **${attacks.tried}** |

Succeeded: **${attacks.succeeded.length}**${attacks.succeeded.length > 0 ? ` — ${attacks.succeeded.join('; ')}` : ''}. Locally the token is checked by the stand-in
for API Gateway's JWT authorizer; in the cloud the authorizer does it. The user and scope
checks are the handler's own in both.
`;
  return {
    md,
    json: { tried: attacks.tried, succeeded: attacks.succeeded.length },
    log: [`attack suite: ${attacks.tried} tried, ${attacks.succeeded.length} succeeded`],
  };
}

async function fuzzRun(quick: boolean): Promise<SectionResult> {
  const fuzz = runReport<FuzzReport>('./fuzz.ts', quick ? ['--quick'] : []);
  return {
    md: fuzzSection(fuzz),
    json: { cases: fuzz.cases, apiRequests: fuzz.injection.stack?.api.requests ?? 0, failures: fuzz.failures },
    log: [
      `fuzzing: ${fuzz.cases} cases in process, ${fuzz.injection.stack?.api.requests ?? 0} API requests on the stack, ${fuzz.failures} failures`,
    ],
  };
}

/** The leak check's verdict, as one sentence. */
function leakLine(load: LoadReport): string {
  const l = load.leak;
  if (!l)
    return `**Leak check: not run** (${load.rounds} rounds; it needs ${SETTLE_ROUNDS} settling rounds and 3 more).`;
  return `**Leak check: ${l.held ? 'held' : 'failed'}** — over rounds ${l.rounds[0]}–${l.rounds.at(-1)} (after ${SETTLE_ROUNDS} rounds in which the emulators' own state fills) the heap used after GC grew ${l.slopeMBPerRound} MB per round by least squares; the bound is ${LEAK_BOUND_BYTES_PER_TURN} bytes per turn published, ${l.boundMBPerRound} MB per round (\`bench/load.ts\`: anything kept per turn, a map entry keyed by an id, would exceed it).${l.held ? '' : ' A miss: load.ts reports ok: false.'}`;
}

async function loadRun(quick: boolean): Promise<SectionResult> {
  const load = runReport<LoadReport>('./load.ts', quick ? ['--quick'] : []);
  return {
    md: loadSection(load),
    json: {
      sessions: load.sessions,
      turns: load.turnsPublished,
      lost: load.lost,
      doubled: load.doubled,
      heapMB: [load.heap.before?.heapUsedMB ?? null, load.heap.after?.heapUsedMB ?? null],
      leak: load.leak,
    },
    log: [
      `load: ${load.sessions} sessions, ${load.turnsPublished} turns, lost ${load.lost}, doubled ${load.doubled}, heap ${load.heap.before?.heapUsedMB} → ${load.heap.after?.heapUsedMB} MB`,
    ],
  };
}

async function faultsRun(quick: boolean): Promise<SectionResult> {
  // LoCoMo scale: --quick replays the shortest conversation; the full run every dev conversation
  // all at once: a replay mostly waits (idle windows, redeliveries, polls) —
  // two of them kept 2 cores about 20 % busy (top, conv-30 at 2c803b7).
  const files = quick
    ? ['conv-30.json']
    : readdirSync(locomoDir())
        .filter((f) => f.endsWith('.json'))
        .sort();
  const reports = await Promise.all(
    files.map((file) =>
      runReportInBackground<EquivalenceReport>('../infra/local/fault-equivalence.ts', [
        '--replay',
        `${locomoDir()}${file}`,
        '--rate',
        '0.1',
        '--seed',
        '1',
      ]),
    ),
  );
  const json = {
    conversations: reports.map((r) => ({
      replay: r.replay.split('/').at(-1),
      determinism: r.determinism.differences,
      equivalence: r.equivalence.differences,
      dlq: r.dlq,
      sustained: r.sustained ? { differences: r.sustained.differences, dlq: r.sustained.dlq } : null,
      // Kept when there are any: a rare difference is otherwise lost with the run (2026-11-27: 41 once, no sample).
      ...(r.differencesFile
        ? {
            differencesByKind: {
              twice: r.determinism.byKind,
              faults: r.equivalence.byKind,
              throttled: r.sustained?.byKind ?? {},
            },
            differencesFile: r.differencesFile,
          }
        : {}),
    })),
  };
  return {
    md: faultSection(reports),
    json,
    log: reports.flatMap((r) => [
      `faults ${r.replay}: ${r.turns} turns, differences ${r.determinism.differences} (twice) / ${r.equivalence.differences} (faults) / ${r.sustained?.differences ?? '-'} (model throttled), DLQ ${r.dlq} / ${r.sustained?.dlq ?? '-'}`,
      ...differenceLines(r).map((line) => `  ${line}`),
    ]),
  };
}

/** Redaction: planted secrets and identifiers that reach a store or a prompt, and ordinary text taken. */
async function redactionSection(): Promise<SectionResult> {
  const r = runScript<RedactionReport>('./redaction.ts');
  const kinds = Object.entries(r.plantedByKind)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const fp = r.falsePositives;
  const md = `## Redaction: secrets and personal identifiers kept out

\`bench/redaction.ts\`: ${r.planted} made-up values in their issuers' formats (${kinds}) planted in
${r.conversation}'s ${r.turns} turns (a sentence added to a query or a response), replayed through the local
stack with the prod stage's policy (personal identifiers on). Then every DynamoDB item, every
object under the user's prefix, \`claims/\` and \`rejected/\`, and every model prompt is searched
for each planted value (as text and as JSON escapes it). Controls: the same search finds
${r.control.foundInInput} of ${r.planted} in the published lines; ${r.control.modelCalls} model calls were made.

| store | planted values found (goal 0) |
| --- | ---: |
| DynamoDB | **${r.reached.dynamodb}** |
| S3 | **${r.reached.s3}** |
| model prompts | **${r.reached.prompts}** |

Ordinary text wrongly redacted: the ${fp.conversations} dev conversations as they are (${fp.turns.toLocaleString('en-US')} queries and
responses, ${fp.words.toLocaleString('en-US')} words), redacted with personal identifiers on: **${fp.total}** spans taken${
    fp.total > 0
      ? ` (${Object.entries(fp.byKind)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}; ${fp.examples.join('; ')})`
      : ''
  }.
LoCoMo holds no real secrets or identifiers, so every span taken there is a false positive.
`;
  return {
    md,
    json: { planted: r.planted, reached: r.reached, falsePositives: fp.total, control: r.control },
    log: [`redaction: ${r.planted} planted, reached ${JSON.stringify(r.reached)}, false positives ${fp.total}`],
  };
}

/** Forgetting a heavy user: the erasure's time, on the local harness and AWS's partition floor. */
async function forgetSection(): Promise<SectionResult> {
  const r = runScript<ForgetReport>('./forget.ts');
  const md = `## Forgetting a heavy user

\`bench/forget.ts\`: a user's partition filled with ${r.items.toLocaleString('en-US')} items of about 1 KB and their folder
with ${r.objects.toLocaleString('en-US')} documents, then \`DELETE /v1/users/{u}\` through the API, the forget job run by the
reflector handler on the local harness until the receipt is done.

| | |
| --- | ---: |
| erasure, request to receipt done | **${r.seconds} s** |
| items / objects the receipt counts | ${r.receipt.items.toLocaleString('en-US')} / ${r.receipt.objects.toLocaleString('en-US')} |
| items / objects left (the state dump) | ${r.left.items} / ${r.left.objects} |
| AWS's floor for the item deletes alone (1,000 write units a second per partition key) | ${r.awsFloorSeconds} s |

DynamoDB Local does not throttle a partition; DynamoDB does, so in AWS the item deletes take at
least the floor above, spread over deliveries of the job (each stops 15 s before the reflector's
120-s timeout and comes back a second later), plus the 35-s settle before the second pass.
`;
  return {
    md,
    json: { ...r },
    log: [
      `forget: ${r.items} items and ${r.objects} objects erased in ${r.seconds} s (left ${JSON.stringify(r.left)})`,
    ],
  };
}

/** Real model answers: LoCoMo replays with the messy model (bench/messy.ts) at 30 %. */
async function messySection(quick: boolean): Promise<SectionResult> {
  const files = quick
    ? ['conv-30.json']
    : readdirSync(locomoDir())
        .filter((f) => f.endsWith('.json'))
        .sort();
  const reports = await Promise.all(
    files.map((file) =>
      runReportInBackground<MessyReport>('./messy.ts', [
        '--replay',
        `${locomoDir()}${file}`,
        '--rate',
        '0.3',
        '--seed',
        '1',
      ]),
    ),
  );
  const kinds = Object.keys(reports[0]?.messyKinds ?? {}) as Array<keyof MessyReport['messyKinds']>;
  const table = [
    `| replay | turns | model calls | messy answers | ${kinds.join(' | ')} | batches | aborted | DLQ | s |`,
    `| --- | ---: | ---: | ---: | ${kinds.map(() => '---:').join(' | ')} | ---: | ---: | ---: | ---: |`,
    ...reports.map(
      (r) =>
        `| ${r.replay} | ${r.turns} | ${r.modelCalls} | ${r.messyAnswers} | ${kinds.map((k) => r.messyKinds[k]).join(' | ')} | ${r.batches} | **${r.batchesAborted}** (${r.abortPercent} %) | ${r.errors} | ${r.seconds} |`,
    ),
  ].join('\n');
  const reasons = reports.flatMap((r) =>
    Object.entries(r.abortReasons).map(([why, n]) => `- ${r.replay}: ${n} × ${why}`),
  );
  const batches = reports.reduce((n, r) => n + r.batches, 0);
  const aborted = reports.reduce((n, r) => n + r.batchesAborted, 0);
  const md = `## Real model answers (the messy model)

\`bench/messy.ts\`: each conversation replayed as \`npm start -- --once --messy-model 0.3\` replays it: 30 % of the
model's structured answers (batch reflections, nightly and weekly runs; summaries are free text and left
alone) written as real models get them wrong (infra/local/messy-model.ts; seed 1): in a code fence, with a
sentence before or after, a trailing comma, an enum value miscased, an extra field, an optional field
missing, cut at max_tokens, or empty, each only where the answer's shape allows it. The parser
(lib/model/model-answer.ts) recovers what still carries an answer; a cut answer is asked again with a
larger budget; an unusable one is asked again on the job's next delivery, then aborts the batch.

${table}

Batches aborted: **${aborted} of ${batches}**${batches > 0 ? ` (${Math.round((aborted / batches) * 10_000) / 100} %)` : ''}.${reasons.length > 0 ? `\n\nWhy:\n${reasons.join('\n')}` : ''}
`;
  return {
    md,
    json: { batches, batchesAborted: aborted, reports },
    log: [
      table,
      `messy: ${aborted} of ${batches} batches aborted, ${reports.reduce((n, r) => n + r.errors, 0)} in DLQs`,
    ],
  };
}

/** Every section, in BENCHMARKS.md's order; the short ones run first in a full run (see main). */
const SECTIONS: readonly Section[] = [
  { name: 'signal-writes', run: () => signalWritesSection() },
  { name: 'locomo', run: locomoSection },
  { name: 'cost', run: async (quick) => costSection(runQuality(quick)) },
  { name: 'search-latency', run: searchLatencySection },
  { name: 'cold-start', run: coldStartSection },
  { name: 'attacks', run: () => attacksSection() },
  { name: 'fuzz', run: fuzzRun },
  { name: 'load', run: loadRun },
  { name: 'faults', run: faultsRun },
  { name: 'reflector-time', run: () => reflectorTimeSection() },
  { name: 'redaction', run: () => redactionSection() },
  { name: 'forget', run: () => forgetSection() },
  { name: 'messy', run: messySection },
];
/** A full run's order: a section that fails then costs minutes, not the replays' hour. */
const RUN_ORDER = [
  'cold-start',
  'signal-writes',
  'reflector-time',
  'search-latency',
  'locomo',
  'cost',
  'attacks',
  'redaction',
  'forget',
  'messy',
  'faults',
  'fuzz',
  'load',
];

const BLOCK = (name: string) => new RegExp(`<!-- bench:${name} -->\\n[\\s\\S]*?<!-- /bench:${name} -->\\n`);

/** BENCHMARKS.md with the blocks of the sections just run replaced (each stamped), the others kept. */
function writeBenchmarks(results: ReadonlyMap<string, SectionResult>, commit: string): void {
  const file = new URL('../BENCHMARKS.md', import.meta.url);
  const old = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const stamp = `_Ran on ${new Date().toISOString().slice(0, 10)} at commit \`${commit}\` (${os.cpus().length} cores, Node ${process.version})._`;
  const blocks = SECTIONS.map(({ name }) => {
    const fresh = results.get(name);
    if (fresh) return `<!-- bench:${name} -->\n${stamp}\n\n${fresh.md.trim()}\n<!-- /bench:${name} -->\n`;
    return (
      BLOCK(name).exec(old)?.[0] ??
      `<!-- bench:${name} -->\n_Not run yet: \`npm run bench -- --only ${name}\`._\n<!-- /bench:${name} -->\n`
    );
  });
  const header = `# Benchmarks

Written by \`npm run bench\` against the local emulators. Each section says the date and the
commit it last ran at: \`npm run bench -- --only NAME\` reruns one section (${SECTIONS.map((s) => `\`${s.name}\``).join(', ')})
and rewrites only its block; \`npm run bench\` reruns them all.
`;
  writeFileSync(file, `${header}\n${blocks.join('\n')}`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, only: { type: 'string', multiple: true } },
    strict: true,
  });
  const only = (values.only ?? []).flatMap((o) => o.split(','));
  const unknown = only.filter((o) => !SECTIONS.some((s) => s.name === o));
  if (unknown.length > 0)
    throw new Error(`--only: no section ${unknown.join(', ')} (sections: ${SECTIONS.map((s) => s.name).join(', ')})`);
  const names = only.length > 0 ? only : RUN_ORDER;
  // The code that runs is the tree as it is now: a commit made while the sections run is not theirs.
  const commit = commitStamp();
  mkdirSync(new URL('./plots/', import.meta.url), { recursive: true });
  const results = new Map<string, SectionResult>();
  for (const name of names) {
    const section = SECTIONS.find((s) => s.name === name) as Section;
    const started = performance.now();
    const result = await section.run(values.quick ?? false);
    results.set(name, result);
    for (const line of result.log) console.log(line);
    console.log(`${name}: ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  }
  writeBenchmarks(results, commit);
  console.log('wrote BENCHMARKS.md');
  // The last line: the section's figures as JSON (all sections' by name in a run of several).
  const single = names.length === 1 ? results.get(names[0] as string)?.json : undefined;
  console.log(JSON.stringify(single ?? Object.fromEntries([...results].map(([name, r]) => [name, r.json]))));
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
