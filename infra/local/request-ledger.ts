/**
 * Counts every AWS request the local harness's functions make, by service and operation,
 * through an SDK middleware on each function's clients (infra/local/clients.ts) — and, for
 * DynamoDB, the capacity units each request used (it asks for ReturnConsumedCapacity=TOTAL,
 * which costs nothing) and, for Bedrock, the tokens a call used. Benchmarks and tests read
 * it. A local-stack tool only: Lambda's clients carry no such middleware.
 */
import type { MetadataBearer } from '@smithy/types';
import { answerNameOf, type ConverseRequest } from './converse-protocol.js';
import { splitUnits, touchedItems } from './item-kinds.js';

export interface LedgerEntry {
  requests: number;
  readUnits: number;
  writeUnits: number;
  /** Model tokens (Bedrock Runtime responses' `usage`). */
  inputTokens: number;
  outputTokens: number;
}

/** The ledger scope of the answers batch inference jobs give (recordBatchAnswer). */
export const BATCH_INFERENCE_SCOPE = 'batch-inference';

const empty = (): LedgerEntry => ({ requests: 0, readUnits: 0, writeUnits: 0, inputTokens: 0, outputTokens: 0 });

const ledger = new Map<string, LedgerEntry>();
/** The same counts split by the scope of the client that made them: the function's key. */
const scoped = new Map<string, Map<string, LedgerEntry>>();
/** Off by default (long runs would only grow it): what each scope's requests addressed. */
let recordTargets = false;
/** Off by default: DynamoDB units split by the kind of item (sort-key prefix) they went to, as `ItemKind.{kind}|{operation}` entries. */
let recordItemKinds = false;
const targets = new Map<string, Set<string>>();
/** S3 requests by scope, operation (` (failed)` appended for a failed one) and the class of key they addressed (`keyClassOf`); always on (the classes are few). */
const s3ByKeyClass = new Map<string, number>();

/**
 * The class of an S3 key, for counting: the user's id as `*`, folders kept to a depth that
 * tells the writers apart, the object's name as its extension (`…/Logs/reflector/*.json`).
 */
export function keyClassOf(key: string): string {
  const parts = key.replace(/^(users|claims)\/[^/]+\//, '$1/*/').split('/');
  const name = parts.pop() ?? '';
  const depth = parts[0] === 'users' || parts[0] === 'claims' ? 4 : 2;
  const ext = /(\.[a-z-]+)+$/.exec(name)?.[0] ?? '';
  return `${parts.slice(0, depth).join('/')}/*${ext}`;
}

/** One distinct request target: the operation and the S3 key or queue URL it addressed. */
export interface RequestTarget {
  operation: string;
  key?: string;
  queueUrl?: string;
}

/** One scope's counts, made on first use. */
function scopeLedger(name: string): Map<string, LedgerEntry> {
  const m = scoped.get(name) ?? new Map<string, LedgerEntry>();
  scoped.set(name, m);
  return m;
}

const copy = (m: Map<string, LedgerEntry>) => Object.fromEntries([...m.entries()].map(([k, v]) => [k, { ...v }]));

export const requestLedger = {
  snapshot(): Record<string, LedgerEntry> {
    return copy(ledger);
  },
  /** Per scope: the requests made by the clients instrumented with that scope. */
  snapshotByScope(): Record<string, Record<string, LedgerEntry>> {
    return Object.fromEntries([...scoped.entries()].map(([name, m]) => [name, copy(m)]));
  },
  reset(): void {
    ledger.clear();
    scoped.clear();
    targets.clear();
    s3ByKeyClass.clear();
  },
  /** S3 requests counted by `scope operation keyClass` (`keyClassOf`), since the last reset. */
  s3ByKeyClass(): Record<string, number> {
    return Object.fromEntries(s3ByKeyClass);
  },
  /**
   * A batch inference job's answer to one record (infra/local/batch-inference-stand-in.ts): Bedrock
   * answers it, no function's client, so it is counted under the scope BATCH_INFERENCE_SCOPE as
   * `BedrockBatch.Converse#{answer}` with the answer's tokens, priced at the batch price (bench/bill.ts).
   */
  recordBatchAnswer(request: ConverseRequest, usage: { inputTokens?: number; outputTokens?: number }): void {
    const key = `BedrockBatch.Converse#${answerNameOf(request) ?? 'text'}`;
    addRequest(ledger, key, 'Converse', { $metadata: {}, usage });
    addRequest(scopeLedger(BATCH_INFERENCE_SCOPE), key, 'Converse', { $metadata: {}, usage });
  },
  /** Start (or stop) recording each scope's distinct request targets, for least-privilege checks. */
  recordTargets(on: boolean): void {
    recordTargets = on;
  },
  /**
   * Start (or stop) splitting DynamoDB units by item kind (infra/local/item-kinds.ts): extra
   * `ItemKind.{kind}|{operation}` entries beside the per-operation ones (whose totals stay as
   * they are); a write's GSI share is `ItemKind.{kind} (gsi1)|{operation}`. Each such entry's
   * `requests` counts the requests that touched that kind.
   */
  recordItemKinds(on: boolean): void {
    recordItemKinds = on;
  },
  /** Per scope: the distinct operations with the S3 key or queue URL each addressed. */
  targetsByScope(): Record<string, RequestTarget[]> {
    return Object.fromEntries(
      [...targets.entries()].map(([name, set]) => [name, [...set].map((t) => JSON.parse(t) as RequestTarget)]),
    );
  },
};

/** Adds `from`'s counts into `into`, key by key (benchmarks total several snapshots' deltas). */
export function addLedger(into: Record<string, LedgerEntry>, from: Record<string, LedgerEntry>): void {
  for (const [k, v] of Object.entries(from)) {
    const e = into[k] ?? empty();
    into[k] = e;
    e.requests += v.requests;
    e.readUnits += v.readUnits;
    e.writeUnits += v.writeUnits;
    e.inputTokens += v.inputTokens;
    e.outputTokens += v.outputTokens;
  }
}

/** Difference of two snapshots (after − before). */
export function ledgerDelta(
  before: Record<string, LedgerEntry>,
  after: Record<string, LedgerEntry>,
): Record<string, LedgerEntry> {
  const out: Record<string, LedgerEntry> = {};
  for (const [k, v] of Object.entries(after)) {
    const b = before[k] ?? empty();
    const d = {
      requests: v.requests - b.requests,
      readUnits: v.readUnits - b.readUnits,
      writeUnits: v.writeUnits - b.writeUnits,
      inputTokens: v.inputTokens - b.inputTokens,
      outputTokens: v.outputTokens - b.outputTokens,
    };
    if (d.requests !== 0) out[k] = d;
  }
  return out;
}

interface Capacity {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
  Table?: { CapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

/** The structured answer a Converse call asks for (its forced tool's or structured output schema's name), or 'text'. */
const converseToolOf = (input: Record<string, unknown>): string =>
  answerNameOf(input as unknown as ConverseRequest) ?? 'text';

const unitsOf = (c: Capacity) => c.CapacityUnits ?? c.WriteCapacityUnits ?? c.ReadCapacityUnits ?? 0;

/** Adds the request's units to `ItemKind.{kind}|{operation}` entries: the table's share by item, each GSI's apart. */
function addItemKinds(
  m: Map<string, LedgerEntry>,
  operation: string,
  input: Record<string, unknown>,
  consumed: Capacity | Capacity[] | undefined,
): void {
  const items = touchedItems(operation, input);
  const field = WRITES.has(operation) ? 'writeUnits' : 'readUnits';
  const shares = new Map<string, number>();
  for (const c of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
    const gsis = Object.entries(c.GlobalSecondaryIndexes ?? {});
    const gsiUnits = gsis.reduce((n, [, g]) => n + (g.CapacityUnits ?? 0), 0);
    const table = c.Table?.CapacityUnits ?? unitsOf(c) - gsiUnits;
    for (const [kind, u] of splitUnits(items, table)) shares.set(kind, (shares.get(kind) ?? 0) + u);
    for (const [name, g] of gsis)
      for (const [kind, u] of splitUnits(items, g.CapacityUnits ?? 0))
        shares.set(`${kind} (${name})`, (shares.get(`${kind} (${name})`) ?? 0) + u);
  }
  for (const kind of new Set([...items.map((i) => i.kind), ...shares.keys()])) {
    const key = `ItemKind.${kind}|${operation}`;
    const entry = m.get(key) ?? empty();
    entry.requests += 1;
    entry[field] += shares.get(kind) ?? 0;
    m.set(key, entry);
  }
}

/** What the ledger reads of a response: DynamoDB's consumed capacity, Bedrock's token usage. */
type CountedOutput = MetadataBearer & {
  ConsumedCapacity?: Capacity | Capacity[];
  usage?: { inputTokens?: number; outputTokens?: number };
};

/** Adds one request to a ledger under `key`: its count, tokens and capacity units. */
function addRequest(m: Map<string, LedgerEntry>, key: string, operation: string, output: CountedOutput): void {
  const entry = m.get(key) ?? empty();
  entry.requests += 1;
  entry.inputTokens += output.usage?.inputTokens ?? 0;
  entry.outputTokens += output.usage?.outputTokens ?? 0;
  const consumed = output.ConsumedCapacity;
  for (const c of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
    const units = c.CapacityUnits ?? 0;
    if (WRITES.has(operation)) entry.writeUnits += c.WriteCapacityUnits ?? units;
    else entry.readUnits += c.ReadCapacityUnits ?? units;
  }
  m.set(key, entry);
}

/** Records what a function's request named (its operation, S3 key, queue URL) among the function's targets. */
function recordTarget(name: string, operation: string, input: Record<string, unknown>): void {
  const target: RequestTarget = { operation };
  if (typeof input.Key === 'string') target.key = input.Key;
  if (typeof input.QueueUrl === 'string') target.queueUrl = input.QueueUrl;
  const set = targets.get(name) ?? new Set<string>();
  set.add(JSON.stringify(target));
  targets.set(name, set);
}

/** Add the counting middleware to a client (any AWS SDK v3 client); `name` scopes its requests (the function's key). */
export function instrument<C extends { middlewareStack: { add: (...args: never[]) => void } }>(
  client: C,
  service: string,
  name?: string,
): C {
  const add = client.middlewareStack.add as unknown as (mw: unknown, options: { step: string; name: string }) => void;
  add(
    (
      next: (args: { input: Record<string, unknown> }) => Promise<{ output: CountedOutput }>,
      context: { commandName?: string },
    ) =>
      async (args: { input: Record<string, unknown> }) => {
        const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
        if (
          service === 'DynamoDB' &&
          ('TableName' in args.input || 'RequestItems' in args.input || 'TransactItems' in args.input)
        ) {
          args.input.ReturnConsumedCapacity ??= recordItemKinds ? 'INDEXES' : 'TOTAL';
        }
        // S3 bills a request that fails with a 4xx (a 404 included) like one that succeeds
        // (https://docs.aws.amazon.com/AmazonS3/latest/userguide/ErrorCodeBilling.html): the key-class tally counts both.
        const keyClass =
          service !== 'S3'
            ? null
            : typeof args.input.Key === 'string'
              ? keyClassOf(args.input.Key)
              : typeof args.input.Prefix === 'string'
                ? keyClassOf(`${args.input.Prefix}x`)
                : null;
        const tally = (suffix: string) => {
          if (keyClass === null) return;
          const k = `${name ?? '-'} ${operation}${suffix} ${keyClass}`;
          s3ByKeyClass.set(k, (s3ByKeyClass.get(k) ?? 0) + 1);
        };
        let result: Awaited<ReturnType<typeof next>>;
        try {
          result = await next(args);
        } catch (error) {
          tally(' (failed)');
          throw error;
        }
        tally('');
        // A Converse call is keyed by the tool it forces too (`#text` without one), so benchmarks can tell job kinds' tokens apart.
        const key =
          service === 'BedrockRuntime'
            ? `${service}.${operation}#${converseToolOf(args.input)}`
            : `${service}.${operation}`;
        if (recordTargets && name !== undefined) recordTarget(name, key, args.input);
        const inScope = name === undefined ? undefined : scopeLedger(name);
        for (const m of inScope ? [ledger, inScope] : [ledger]) {
          addRequest(m, key, operation, result.output);
          if (recordItemKinds && service === 'DynamoDB')
            addItemKinds(m, operation, args.input, result.output.ConsumedCapacity);
        }
        return result;
      },
    { step: 'initialize', name: 'requestLedger' },
  );
  return client;
}
