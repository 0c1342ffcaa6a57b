/**
 * A canonical dump of what the memory holds: every DynamoDB item under each user's
 * partition and every S3 object under `users/{id}/`, with keys sorted and the values that
 * are times of processing (not of the input) replaced by a placeholder. Two replays of
 * the same input — fault-free, with faults, twice — must give the same dump; `diffDumps`
 * says where they differ.
 *
 * What is masked, and why (everything else must match byte for byte):
 * - durations (`duration_ms`, `durationMs`, the model's `latencyMs`): they measure the machine;
 * - how a model answer was had: reused from an earlier delivery (`reused`), after a call cut
 *   at its output budget (`budgetRetry`, `budgetRetries`), and so its cost (`estimatedCostUsd`,
 *   and a cost ledger entry's cost and tokens; its day is the job's input day);
 * - the times of processing: when a reflection staged or promoted something, wrote a
 *   summary or a batch log (`staged_at`, `createdAt`, a batch log's `timestamp`…). The
 *   seeds define them as "when it ran", so they come from the clock. In a replay the clock
 *   follows the input's timestamps but runs on at real speed in between, so they differ
 *   by however long processing took (seconds more when faults make it retry). They are
 *   cut to their day, so a run that moved to another day still shows. Ids, keys, turn
 *   timestamps and schedule times are derived from the input and are compared as they are;
 *   inside the text of logs (`Logs/`: e.g. an expiry's "staged 2023-01-20T16:17:30Z, more
 *   than 30 days ago") every time is cut to its day;
 * - a tier entry's expiry (and its expiry index key) and last sighting, and an audit entry's key and
 *   time: counted from when it was written, a time of processing like `createdAt`;
 * - the signal state's `appliedMessages`: tags of SQS message ids, which SQS assigns.
 *
 * - the content hash in a knowledge index snapshot's key (`index/knowledge/{version}-{hash}.json`,
 *   and the pointer naming it): the hash covers the documents' times of processing, which are
 *   masked inside the snapshot, where its content is compared.
 *
 * Left out: the search index (its pointer, change marks and segments). It is derived
 * from the items above, and where one compaction ends and the next begins depends on timing;
 * what it serves is compared by the search tests, not here. Left out too: the record of a model
 * call cut at its budget and asked again (`budgetRetry`, `budgetRetries`), which is there only
 * when it happened: it says how an answer was had, like `reused`.
 */
import { createHash } from 'node:crypto';
import { ListObjectVersionsCommand, type S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { keys, searchSegmentsPrefix, userPrefix } from '../../lib/kernel/memory-paths.js';
import { getText, listAllKeys } from '../../lib/kernel/s3-objects.adapter.js';
import { storedState } from '../../lib/signals/dynamo-signal-state-store.adapter.js';
import { unpackJson } from '../../lib/kernel/packed-json.adapter.js';

export interface UserStateDump {
  userId: string;
  /** DynamoDB items by `pk|sk`. */
  items: Record<string, unknown>;
  /** S3 objects by key (text; JSON documents parsed and normalised like items). */
  objects: Record<string, unknown>;
  /**
   * Asked for with `{ versions: true }`: what the versioned bucket keeps besides the current
   * objects, by key — each noncurrent version and delete marker, newest first. Left out of
   * the default dump: how many versions a key has depends on how often a retried write ran.
   */
  versions?: Record<string, Array<'noncurrent version' | 'delete marker'>>;
}

export interface StoredVersionEntry {
  key: string;
  versionId: string;
  isLatest: boolean;
  deleteMarker: boolean;
}

/** Every version and delete marker under `prefix` (ListObjectVersions, a page at a time), each key's newest first. */
export async function listObjectVersions(s3: S3Client, bucket: string, prefix: string): Promise<StoredVersionEntry[]> {
  const out: StoredVersionEntry[] = [];
  let KeyMarker: string | undefined;
  let VersionIdMarker: string | undefined;
  do {
    const res = await s3.send(
      new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker, VersionIdMarker }),
    );
    const page = [
      ...(res.Versions ?? []).map((v) => ({ v, deleteMarker: false })),
      ...(res.DeleteMarkers ?? []).map((v) => ({ v, deleteMarker: true })),
    ];
    // Keys in order, each key's versions newest first (S3's order, which the two lists split).
    page.sort(
      (a, b) =>
        String(a.v.Key).localeCompare(String(b.v.Key)) || Number(b.v.LastModified ?? 0) - Number(a.v.LastModified ?? 0),
    );
    out.push(
      ...page.map(({ v, deleteMarker }) => ({
        key: String(v.Key),
        versionId: String(v.VersionId ?? 'null'),
        isLatest: v.IsLatest === true,
        deleteMarker,
      })),
    );
    KeyMarker = res.IsTruncated ? res.NextKeyMarker : undefined;
    VersionIdMarker = res.IsTruncated ? res.NextVersionIdMarker : undefined;
  } while (KeyMarker !== undefined);
  return out;
}

/** The versions the bucket keeps under `prefix` besides each key's current object. */
async function keptVersions(
  s3: S3Client,
  bucket: string,
  prefix: string,
): Promise<NonNullable<UserStateDump['versions']>> {
  const kept: NonNullable<UserStateDump['versions']> = {};
  for (const v of await listObjectVersions(s3, bucket, prefix)) {
    if (v.isLatest && !v.deleteMarker) continue;
    const key = maskSnapshotKey(v.key);
    kept[key] = [...(kept[key] ?? []), v.deleteMarker ? 'delete marker' : 'noncurrent version'];
  }
  return sortKeys(kept) as NonNullable<UserStateDump['versions']>;
}

const DURATION_KEYS = new Set(['duration_ms', 'durationMs', 'latencyMs']);
const PROCESSING_FACTS = new Set(['reused', 'estimatedCostUsd']);
/** What a cost ledger entry measures: the calls a job made, however many it took. */
const COST_MEASURES = ['costUsd', 'inputTokens', 'outputTokens'] as const;
/** Processing facts recorded only when they happened, so left out rather than masked. */
const ONE_SIDED_FACTS = new Set(['budgetRetry', 'budgetRetries']);
/**
 * Fields (and front-matter keys) holding a time of processing, in every kind of record. A
 * staged item's `stagedAt` is not one: it is its batch's last turn's time,
 * so dumps compare it exactly.
 */
const PROCESSING_TIMES = new Set([
  'promoted_at',
  'promotedAt',
  'created_at',
  'createdAt',
  'lastBatchTimestamp',
  'lastSeenAt',
  'idleCheckDueAt',
  // The signal state's idleSummary: its check's due time (the idleCheckDueAt it had).
  'dueAt',
  'updatedAt',
  'receivedAt',
  'requestedAt',
  'enqueuedAt',
]);
const ISO = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const FRONT_MATTER_TIME = /^(\w+): (\d{4}-\d{2}-\d{2})T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/gm;

/** A knowledge index snapshot's key: its version, then a hash of its content (lib/knowledge/knowledge-index.adapter.ts). */
const SNAPSHOT_KEY = /(\/index\/knowledge\/\d+)-[0-9a-f]{16}\.json$/;
const maskSnapshotKey = (key: string) => key.replace(SNAPSHOT_KEY, '$1-<content hash>.json');

const ISO_IN_TEXT = /(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;
const maskTime = (iso: string) => iso.replace(ISO, '$1T<processing time>');

/**
 * Replace what measures the machine rather than the memory (see the module's comment).
 * `timestampIsProcessing` also masks `timestamp` (a batch log's: when the batch ran).
 */
export function normalise(value: unknown, options: { key?: string; timestampIsProcessing?: boolean } = {}): unknown {
  const { key = '', timestampIsProcessing = false } = options;
  if (key === 'appliedMessages') return '<message tags>';
  if (Array.isArray(value)) return value.map((v) => normalise(v, { timestampIsProcessing }));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as Record<string, unknown>)
        .filter((k) => !ONE_SIDED_FACTS.has(k))
        .sort()
        .map((k) => [k, normalise((value as Record<string, unknown>)[k], { key: k, timestampIsProcessing })]),
    );
  }
  if (typeof value === 'number' && DURATION_KEYS.has(key)) return '<duration>';
  // Whether a batch's model answer was reused from an earlier delivery (then at no cost), or
  // came after a call cut at its output budget (budgetRetry), is how the batch was processed,
  // like its duration: the answer and what came of it are kept.
  if (PROCESSING_FACTS.has(key)) return '<processing>';
  // A TTL (epoch seconds) counted from the time of processing, e.g. a source observation's marker.
  if (typeof value === 'number' && key === 'expiresAt') return maskTime(new Date(value * 1000).toISOString());
  if (typeof value !== 'string') return value;
  if (PROCESSING_TIMES.has(key) || (timestampIsProcessing && key === 'timestamp')) return maskTime(value);
  const text = timestampIsProcessing ? value.replace(ISO_IN_TEXT, '$1T<time>') : value;
  // Markdown front matter: the same fields, as `key: time` lines.
  return text.replace(FRONT_MATTER_TIME, (line, k: string, day: string) =>
    PROCESSING_TIMES.has(k) ? `${k}: ${day}T<processing time>` : line,
  );
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

async function queryAll(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const res = await ddb.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ExclusiveStartKey: start,
        ConsistentRead: true,
      }),
    );
    items.push(...(res.Items ?? []));
    start = res.LastEvaluatedKey;
  } while (start);
  return items;
}

/** The attribute whose JSON an item's `packed` holds (the signal state's is unpacked apart), by sort-key prefix. */
const PACKED_AS: ReadonlyArray<readonly [string, string]> = [
  [keys.modelOutputSk(''), 'response'],
  [keys.batchPrefix, 'log'],
  [keys.runsPrefix, 'run'],
];
const packedAs = (sk: string): string | undefined => PACKED_AS.find(([prefix]) => sk.startsWith(prefix))?.[1];

/**
 * A tier entry's times of processing: its expiry is counted from its write (as its createdAt),
 * and so is the expiry index's sort key; `seen.at` is when it was last written. An audit
 * entry's key and `at` are when the change was made. All cut to their day, as `createdAt` is.
 */
function maskTierTimes(sk: string, value: unknown): unknown {
  if (!isRecord(value)) return value;
  if (sk.startsWith(keys.auditPrefix) && isRecord(value.entry))
    return { ...value, sk: maskAuditKey(sk), entry: { ...value.entry, at: maskTime(String(value.entry.at)) } };
  if (!sk.startsWith(keys.memoryPrefix) || !isRecord(value.item)) return value;
  const item = value.item;
  const seen = isRecord(item.seen) ? { seen: { ...item.seen, at: maskTime(String(item.seen.at)) } } : {};
  return {
    ...value,
    ...(typeof value.gsi1sk === 'string' ? { gsi1sk: value.gsi1sk.replace(ISO_IN_TEXT, '$1T<processing time>') } : {}),
    item: { ...item, ...(typeof item.expiresAt === 'string' ? { expiresAt: maskTime(item.expiresAt) } : {}), ...seen },
  };
}

/** An audit entry's key with its time of processing cut to the day (`AUDIT#{at}#{item}#{action}`). */
const maskAuditKey = (sk: string) =>
  sk.startsWith(keys.auditPrefix) ? sk.replace(ISO_IN_TEXT, '$1T<processing time>') : sk;

/** Two audit entries of one item and action on one day: the second keyed `… (2)`, in key order. */
function uniqueKey(items: Record<string, unknown>, key: string): string {
  let n = 1;
  while (`${key}${n === 1 ? '' : ` (${n})`}` in items) n++;
  return `${key}${n === 1 ? '' : ` (${n})`}`;
}

export async function dumpUserState(
  clients: { ddb: DynamoDBDocumentClient; s3: S3Client },
  where: { tableName: string; bucketName: string },
  userId: string,
  options: { versions?: boolean } = {},
): Promise<UserStateDump> {
  const items: Record<string, unknown> = {};
  for (const item of await queryAll(clients.ddb, where.tableName, keys.userPk(userId))) {
    const sk = String(item.sk);
    if (sk === keys.searchIndexSk || sk.startsWith(keys.searchChangePrefix)) continue;
    // A recorded model answer, and a batch log kept in its item, are JSON text: compared parsed, masked like a document's.
    const value =
      sk === keys.knowledgeIndexSk && typeof item.key === 'string'
        ? { ...item, key: maskSnapshotKey(item.key) }
        : sk === keys.signalSk && typeof item.packed === 'string'
          ? // Compared unpacked: a difference is named by its field, not by the packed bytes.
            { ...Object.fromEntries(Object.entries(item).filter(([k]) => k !== 'packed')), state: storedState(item) }
          : typeof item.packed === 'string' && packedAs(sk) !== undefined
            ? // Packed JSON (a model answer, a batch log, a run record), compared as the attribute it packs.
              {
                ...Object.fromEntries(Object.entries(item).filter(([k]) => k !== 'packed')),
                [packedAs(sk) ?? 'packed']: unpackJson(item.packed),
              }
            : sk.startsWith(keys.modelOutputSk('')) && typeof item.response === 'string'
              ? { ...item, response: JSON.parse(item.response) as unknown }
              : sk.startsWith(keys.batchPrefix) && typeof item.log === 'string'
                ? { ...item, log: JSON.parse(item.log) as unknown }
                : sk.startsWith(keys.costPrefix) && isRecord(item.entry)
                  ? // A cost entry's day (in its key) is the job's input day; its `at` is cut to the day, as a
                    // summary's or signal-made job's `requestedAt` is the clock's when the job was asked for.
                    // What the job spent counts every call it made, a call cut at its budget and asked again included.
                    {
                      ...item,
                      entry: {
                        ...item.entry,
                        at: maskTime(String(item.entry.at)),
                        ...Object.fromEntries(COST_MEASURES.map((k) => [k, '<processing>'])),
                      },
                    }
                  : item;
    items[uniqueKey(items, `${String(item.pk)}|${maskAuditKey(sk)}`)] = normalise(maskTierTimes(sk, value), {
      timestampIsProcessing: sk.startsWith(keys.batchPrefix),
    });
  }
  const objects: Record<string, unknown> = {};
  for (const key of (await listAllKeys(clients.s3, where.bucketName, userPrefix(userId))).sort()) {
    if (key.startsWith(searchSegmentsPrefix(userId))) continue;
    const text = await getText(clients.s3, where.bucketName, key);
    let value: unknown = text;
    if (key.endsWith('.json')) {
      try {
        value = JSON.parse(text);
      } catch {
        // kept as text
      }
    }
    objects[maskSnapshotKey(key)] = normalise(value, { timestampIsProcessing: key.includes('/Logs/') });
  }
  const dump: UserStateDump = { userId, items: sortKeys(items), objects: sortKeys(objects) };
  if (options.versions) dump.versions = await keptVersions(clients.s3, where.bucketName, userPrefix(userId));
  return dump;
}

function sortKeys(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((k) => [k, record[k]]),
  );
}

export function dumpDigest(dump: UserStateDump): string {
  return createHash('sha256').update(JSON.stringify(dump)).digest('hex').slice(0, 16);
}

export interface DumpDifference {
  where: 'item' | 'object';
  key: string;
  /** Present in `a` only, in `b` only, or in both with different content. */
  kind: 'only-a' | 'only-b' | 'changed';
  /** For `changed`: the first differing path inside the value. */
  path?: string;
  a?: unknown;
  b?: unknown;
}

/** Every difference between two dumps (empty when they are the same state). */
export function diffDumps(a: UserStateDump, b: UserStateDump): DumpDifference[] {
  const out: DumpDifference[] = [];
  for (const where of ['item', 'object'] as const) {
    const ra = where === 'item' ? a.items : a.objects;
    const rb = where === 'item' ? b.items : b.objects;
    for (const key of new Set([...Object.keys(ra), ...Object.keys(rb)])) {
      if (!(key in rb)) out.push({ where, key, kind: 'only-a' });
      else if (!(key in ra)) out.push({ where, key, kind: 'only-b' });
      else {
        const d = firstDifference(ra[key], rb[key], '');
        if (d) out.push({ where, key, kind: 'changed', ...d });
      }
    }
  }
  return out;
}

function firstDifference(a: unknown, b: unknown, path: string): { path: string; a: unknown; b: unknown } | null {
  if (JSON.stringify(a) === JSON.stringify(b)) return null;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const ka = Object.keys(a as object);
    const kb = Object.keys(b as object);
    for (const k of new Set([...ka, ...kb])) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}/${k}`);
      if (d) return d;
    }
  }
  if (typeof a === 'string' && typeof b === 'string') {
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    return { path: `${path}@${i}`, a: a.slice(Math.max(0, i - 40), i + 80), b: b.slice(Math.max(0, i - 40), i + 80) };
  }
  return { path, a, b };
}
