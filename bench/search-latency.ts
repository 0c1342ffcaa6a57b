/**
 * Benchmark: memory.search for one user at 1,000 / 10,000 / 100,000 items,
 * through the real api handler on the local harness (HTTP, token, routing, IAM-enforced
 * clients, DynamoDB Local and the S3 emulator).
 *
 * Each user's items are memory items (`MEM#`) holding LoCoMo sentences (every dialog line of
 * the five conversations, cycled with a suffix to reach the size), written to the table, and
 * their search index as a compaction leaves it: one segment and its pointer, written with the
 * index store the functions use. Queries are LoCoMo questions.
 *
 * - warm: the api container has the user's segment loaded; each search reads the pointer,
 *   then the change marks from its watermark, ranks, and reads the page's items;
 * - cold: a new api container (its handler factory run anew) answers its first search,
 *   segment download and load included;
 * - read units: DynamoDB read capacity per warm search, as DynamoDB Local reports it (the
 *   request ledger), all operations together;
 * - the floor: the three DynamoDB requests a warm search makes in a row, sent straight from
 *   the SDK with no handler around them, to tell the emulator's latency from ours;
 * - CPU: the process's CPU time while the api handler ran each warm search (one search at a
 *   time, and DynamoDB Local runs in its own JVM, so it is the handler's), and the latency
 *   projected at the api function's memory size: Lambda gives CPU in proportion to memory,
 *   one vCPU at 1,769 MB (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html),
 *   so each search's CPU part is stretched by 1,769 ÷ memory and its waiting part kept.
 *   This machine's core and Lambda's are taken as equal.
 *
 *   npx tsx bench/search-latency.ts [--sizes 1000,10000,100000]
 * prints the rows; its last line is the same rows as JSON.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createApiHandler } from '../functions/api/create-handler.js';
import { ApiEnvSchema } from '../functions/api/env.js';
import { parseEnv } from '../lib/kernel/config.adapter.js';
import { functionClients } from '../infra/local/clients.js';
import { type HttpHandler, startHttpApi } from '../infra/local/http-api.js';
import { ledgerDelta, requestLedger } from '../infra/local/request-ledger.js';
import { startHarness } from '../infra/local/harness.js';
import { batchWriteAll } from '../lib/kernel/dynamo-query.adapter.js';
import { DynamoMemoryItemStore, memoryItemRow } from '../lib/items/memory-item-store.adapter.js';
import { DynamoS3SearchIndexStore, DynamoSearchChangeLog } from '../lib/search/search-index-store.adapter.js';
import { createDocumentClient, createDynamoDbClient, createS3Client } from '../lib/kernel/aws-clients.adapter.js';
import type { MemoryItem } from '../lib/items/memory-item.js';
import { segmentOf } from '../lib/search/search-segments.js';
import { newTierItem } from '../lib/tiers/memory-tiers.js';
import { stageConfig } from '../infra/config/stages.js';
import { projectedMs } from './lambda-cpu.js';

export interface SearchLatencyRow {
  items: number;
  queries: number;
  p50: number;
  p95: number;
  coldMs: number;
  readUnitsPerSearch: number;
  /** The same three DynamoDB requests a warm search makes in a row (pointer, marks, a page of 10), sent straight from the SDK: the emulator's floor. */
  floorP50: number;
  floorP95: number;
  /** Median CPU time of the api handler per warm search, on this machine. */
  cpuMsPerSearch: number;
  /** The warm searches' p95 with each one's CPU part stretched to the api function's share of a core. */
  lambdaP95Ms: number;
  /** The same projection at each memory size the api could have (PROJECTED_MEMORY_MB), to choose it from. */
  lambdaP95MsByMemoryMb: Record<number, number>;
}

/** Memory sizes the projection is reported at: today's api, twice it, and one full vCPU (1,769 MB). */
export const PROJECTED_MEMORY_MB = [512, 1024, 1769] as const;

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};

function locomo(dir: string): { lines: string[]; questions: string[] } {
  const lines: string[] = [];
  const questions: string[] = [];
  for (const f of ['conv-26.json', 'conv-30.json', 'conv-41.json', 'conv-42.json', 'conv-43.json']) {
    const conv = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown> & {
      qa: Array<{ question: string }>;
      conversation?: Record<string, unknown>;
    };
    for (const [k, v] of Object.entries(conv.conversation ?? conv))
      if (/^session_\d+$/.test(k) && Array.isArray(v)) for (const l of v as Array<{ text: string }>) lines.push(l.text);
    questions.push(...conv.qa.map((q) => q.question));
  }
  return { lines, questions };
}

type LocalHarness = Awaited<ReturnType<typeof startHarness>>;

/** What each size's measurement shares: the stack, the bench's own clients and the LoCoMo text. */
interface Bench {
  stack: LocalHarness;
  ddb: ReturnType<typeof createDocumentClient>;
  indexStore: DynamoS3SearchIndexStore;
  /** When the items were written (one time for every size). */
  now: Date;
  lines: string[];
  questions: string[];
  /** The CPU ms of the api handler's last invocation (the stack's observer sets it). */
  lastCpuMs: { value: number };
  /** The api function's memory size in the stage's settings. */
  apiMemoryMb: number;
}

export async function benchSearchLatency(dir: string, sizes: readonly number[]): Promise<SearchLatencyRow[]> {
  const { lines, questions } = locomo(dir);
  const lastCpuMs = { value: 0 };
  const stack = await startHarness({
    stage: 'bench',
    logLevel: 'SILENT',
    observe: (i) => {
      if (i.fn === 'api') lastCpuMs.value = i.cpuMs ?? 0;
    },
  });
  try {
    await Promise.all(Object.values(stack.sources).map((s) => s.stop()));
    // The seeding writes as a compaction would, with the bench's own (unenforced) clients.
    const ddb = createDocumentClient(createDynamoDbClient());
    const indexStore = new DynamoS3SearchIndexStore({
      ddb,
      s3: createS3Client(),
      tableName: stack.info.tableName,
      bucketName: stack.info.bucketName,
    });
    const bench: Bench = {
      stack,
      ddb,
      indexStore,
      now: stack.now(),
      lines,
      questions,
      lastCpuMs,
      apiMemoryMb: stageConfig('bench').memoryMb.api,
    };
    const rows: SearchLatencyRow[] = [];
    for (const n of sizes) rows.push(await measureSize(bench, n));
    return rows;
  } finally {
    await stack.stop();
  }
}

/** One size: seed `n` items, time cold, then warm searches and the floor of the three requests a search needs; log the row. */
async function measureSize(bench: Bench, n: number): Promise<SearchLatencyRow> {
  const { stack } = bench;
  const user = `bench-${n}`;
  await seedItems(bench, user, n);
  const search = searcher(bench, user, n);
  const cold: number[] = [];
  for (let c = 0; c < 3; c++) cold.push(await coldSearch(stack, (url) => search(url, 1000 + c)));
  // The stack's own container: warm from here on (segment loaded, code compiled by the JIT).
  for (let w = 0; w < 10; w++) await search(stack.info.apiUrl, 500 + w);
  // 200 searches: a p95 of 40 would be the second-slowest search, too noisy to hold a goal to.
  const queries = 200;
  const times: number[] = [];
  const cpu: number[] = [];
  const walls: number[] = [];
  const before = requestLedger.snapshot();
  for (let q = 1; q <= queries; q++) {
    const t0 = performance.now();
    await search(stack.info.apiUrl, q);
    const wall = performance.now() - t0;
    times.push(wall);
    cpu.push(bench.lastCpuMs.value);
    walls.push(wall);
  }
  const d = ledgerDelta(before, requestLedger.snapshot());
  const readUnits = Object.entries(d)
    .filter(([k]) => k.startsWith('DynamoDB.'))
    .reduce((s, [, v]) => s + v.readUnits, 0);
  const floor = await timeFloor(bench, user, n, queries);
  const r: SearchLatencyRow = {
    items: n,
    queries,
    p50: quantile(times, 0.5),
    p95: quantile(times, 0.95),
    coldMs: quantile(cold, 0.5),
    readUnitsPerSearch: readUnits / queries,
    floorP50: quantile(floor, 0.5),
    floorP95: quantile(floor, 0.95),
    cpuMsPerSearch: quantile(cpu, 0.5),
    lambdaP95Ms: projectedP95(walls, cpu, bench.apiMemoryMb),
    lambdaP95MsByMemoryMb: Object.fromEntries(PROJECTED_MEMORY_MB.map((mb) => [mb, projectedP95(walls, cpu, mb)])),
  };
  console.log(
    `${n} items: p50 ${r.p50.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms, cold ${r.coldMs.toFixed(0)} ms (${cold.map((c) => c.toFixed(0)).join(' / ')}), ${r.readUnitsPerSearch.toFixed(2)} read units per search; the three requests alone p50 ${r.floorP50.toFixed(1)} ms, p95 ${r.floorP95.toFixed(1)} ms; CPU ${r.cpuMsPerSearch.toFixed(1)} ms per search, p95 projected at ${bench.apiMemoryMb} MB ${r.lambdaP95Ms.toFixed(1)} ms`,
  );
  return r;
}

/** The p95 of the searches with each one's CPU part stretched to `memoryMb`'s share of a core. */
const projectedP95 = (walls: readonly number[], cpu: readonly number[], memoryMb: number): number =>
  quantile(
    walls.map((wall, i) => projectedMs(wall, cpu[i] ?? 0, memoryMb)),
    0.95,
  );

/** `n` long-term items of LoCoMo text, written as a compaction would: the rows, one index segment, the head. */
async function seedItems({ stack, ddb, indexStore, now, lines }: Bench, user: string, n: number): Promise<void> {
  const items: MemoryItem[] = Array.from({ length: n }, (_, i) => {
    const fresh = newTierItem(
      user,
      'long_term',
      { text: `${lines[i % lines.length]} (${Math.floor(i / lines.length)})`, sourceTurns: [i + 1] },
      now,
    );
    return { ...fresh, id: `mem:${i}`, path: `memory/long_term/mem:${i}` };
  });
  await batchWriteAll(
    ddb,
    stack.info.tableName,
    items.map((item) => ({ PutRequest: { Item: memoryItemRow(item) } })),
  );
  const written = await indexStore.putSegment(user, 1, segmentOf(items));
  await indexStore.moveHead(user, 0, { version: 1, segments: [{ ...written, items: n, removes: [] }] });
}

/** Search number `q` (a LoCoMo question) for `user` against the API at `url`. */
function searcher({ stack, questions }: Bench, user: string, n: number) {
  const body = (q: number) => JSON.stringify({ query: questions[(q * 37) % questions.length] ?? 'what', limit: 10 });
  return (url: string, q: number) =>
    fetch(`${url}/v1/users/${user}/memory/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.info.adminToken}`, 'content-type': 'application/json' },
      body: body(q),
    }).then(async (r) => {
      if (r.status !== 200) throw new Error(`search at ${n} items: ${r.status} ${await r.text()}`);
      return (await r.json()) as { results: unknown[] };
    });
}

/** The floor: the three requests a search makes (the pointer, the marks from its watermark, ten items), timed alone `queries` times. */
async function timeFloor(
  { stack, ddb, indexStore }: Bench,
  user: string,
  n: number,
  queries: number,
): Promise<number[]> {
  const floor: number[] = [];
  const table = { ddb, tableName: stack.info.tableName };
  const items10 = new DynamoMemoryItemStore({ ...table, changes: new DynamoSearchChangeLog(table) });
  for (let q = 1; q <= queries; q++) {
    const t0 = performance.now();
    const head = await indexStore.head(user);
    await indexStore.changes(user, head.watermark);
    await items10.getMany(
      user,
      Array.from({ length: 10 }, (_, i) => `mem:${(q * 97 + i * 13) % n}`),
    );
    floor.push(performance.now() - t0);
  }
  return floor;
}

/** A new api container's first search: its handler factory run anew, behind its own local HTTP API. */
async function coldSearch(stack: LocalHarness, search: (url: string) => Promise<unknown>): Promise<number> {
  const handler = createApiHandler(
    parseEnv(ApiEnvSchema, stack.info.environments.api),
    functionClients('api', stack.iam),
    { now: () => stack.now() },
  );
  const api = await startHttpApi({
    handler: handler as HttpHandler,
    tokenSecret: stack.info.tokenSecret,
    functionName: 'bench-cold-api',
    timeoutSeconds: 30,
  });
  try {
    const t0 = performance.now();
    await search(api.url);
    return performance.now() - t0;
  } finally {
    await api.stop();
  }
}

/** Each projected memory size's p95 per corpus size, rounded: `{ "512": [...], "1024": [...], "1769": [...] }`. */
export const byMemory = (rows: readonly SearchLatencyRow[]): Record<string, number[]> =>
  Object.fromEntries(
    PROJECTED_MEMORY_MB.map((mb) => [
      String(mb),
      rows.map((r) => Math.round((r.lambdaP95MsByMemoryMb[mb] ?? 0) * 10) / 10),
    ]),
  );

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sizes: { type: 'string', default: '1000,10000,100000' } } });
  const dir = process.env.LOCOMO_DIR ?? new URL('../../shared/data/locomo/', import.meta.url).pathname;
  const rows = await benchSearchLatency(dir, (values.sizes ?? '').split(',').map(Number));
  console.log(
    JSON.stringify({
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
    }),
  );
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(error instanceof Error ? error.stack : error);
      process.exit(2);
    },
  );
}
