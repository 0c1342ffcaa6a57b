/**
 * Where a user's search index lives, and how its writers stay out of each other's way.
 *
 * - Segments: immutable S3 objects (`users/{u}/index/search/{version}-{writer}.seg.{part}`), the bytes
 *   of lib/search/search-segment.ts in parts of at most PART_BYTES, read in parallel (AWS's
 *   advice for throughput: https://docs.aws.amazon.com/AmazonS3/latest/userguide/optimizing-performance-guidelines.html;
 *   the local S3 emulator also refuses a body over 11 MiB). A warm container keeps the
 *   segments it read: a key never changes content.
 * - The pointer (`SEARCHINDEX` in the owner's partition): the index version and its segments,
 *   oldest first, each with the ids it removes from older ones. Moved only by a conditional
 *   write naming the version the writer read, as the knowledge index's pointer is
 *   (knowledge-index.ts), so two compactions never both win.
 * - Changes (`SEARCHCHANGE#{at}`): every store that writes searchable items marks them here
 *   after its own write (DynamoSearchChangeLog): one mark per write for all the ids it
 *   changed (packed a KB to an item), under a key unique to the mark, sorted by `at` — but for
 *   a user's turns above the highest its signal state counted, which the turn index stands
 *   for above the pointer's turn watermark (dynamo-turn-log.ts). The
 *   marks of the per-turn path (signal, reflector) carry the table's TTL attribute and are
 *   never deleted by a compaction: DynamoDB's TTL deletes them 30 days (MARK_TTL_MS) on, without
 *   consuming write throughput (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html).
 *   The pointer carries a watermark: every mark whose `at` is below it is folded into the
 *   segments it names, so readers query only the marks from the watermark on (and skip those
 *   the pointer lists as folded above it).
 *
 * Readers read the pointer first, then the marks from its watermark, strongly consistent
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html):
 * a mark below the watermark is in the pointer's segments, one at or above it is read — no
 * mark is deleted while it may still be needed (TTL only, a month on). An expired mark that
 * TTL has not deleted yet is still returned by a read (DynamoDB "typically deletes expired
 * items within two days": https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTimeToLive.html,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ttl-expired-items.html),
 * and is ignored as any folded mark is: by the watermark, never by its TTL. S3 is strongly
 * consistent for reads after writes
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/Welcome.html#ConsistencyModel).
 */
import { randomUUID } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { RecentCache } from '../kernel/recent-cache.js';
import { GLOBAL_USER } from '../items/memory-item.js';
import { keys, SEARCH_MARK_TTL_MS as MARK_TTL_MS, searchSegmentKey } from '../kernel/memory-paths.js';
import type { SearchSegment } from './search-segment.js';
import { segmentFromBytes, segmentToBytes } from './segment-bytes.js';
import type { SearchChange, SearchIndexHead, SearchIndexStore } from './search-index.port.js';
import { isConditionalCheckFailure } from '../kernel/dynamo-errors.adapter.js';
import { batchWriteAll, queryAll } from '../kernel/dynamo-query.adapter.js';
import { isMissingObject } from '../kernel/s3-objects.adapter.js';
import type { SearchChangeLog, Storage, StorageTable } from '../kernel/storage.adapter.js';

/**
 * Segments a warm container keeps (the large base of a few users, and their small deltas),
 * least recently used first out: at most this many, and at most CACHED_BYTES of their bytes
 * (a base of months of history is megabytes; the reflector has 512 MB, the API 1,769 MB).
 */
const CACHED_SEGMENTS = 48;
const CACHED_BYTES = 96 * 1024 * 1024;
/** The largest object a segment is split into. */
export const PART_BYTES = 8 * 1024 * 1024;
const partKey = (key: string, part: number) => `${key}.${part}`;
/** The first sort key after every change mark's. */
const MARKS_END = 'SEARCHCHANGE$';
/** TTL stamps sent at once. */
const STAMPS_AT_ONCE = 25;

export class DynamoS3SearchIndexStore implements SearchIndexStore {
  /** By key (a key never changes content), sized by the segment's bytes as stored. */
  private readonly cache = new RecentCache<string, { segment: SearchSegment; bytes: number }>({
    max: CACHED_SEGMENTS,
    maxSize: CACHED_BYTES,
    sizeOf: (e) => e.bytes,
  });
  private readonly ddb: DynamoDBDocumentClient;
  private readonly s3: S3Client;
  private readonly tableName: string;
  private readonly bucketName: string;

  constructor(storage: Omit<Storage, 'changes'>) {
    this.ddb = storage.ddb;
    this.s3 = storage.s3;
    this.tableName = storage.tableName;
    this.bucketName = storage.bucketName;
  }

  /**
   * Every id the owner's marks from `from` on carry (`at` ≥ from; all when from is absent),
   * once, with its newest mark's `at`, and the marks that carry it which have no TTL yet
   * (for expireChanges). A mark of an earlier format (`SEARCHCHANGE#{itemId}`, one id each)
   * sorts after every `at` (item ids begin with a letter, `at` with the year): it is read
   * whatever the watermark and skipped by its `at`.
   */
  async changes(userId: string, from?: string): Promise<SearchChange[]> {
    const lo = keys.searchChangeSk(from ?? '');
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      // `SEARCHCHANGE$` is the first key after every `SEARCHCHANGE#…` ('$' follows '#').
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
      ExpressionAttributeValues: { ':pk': keys.ownerPk(userId), ':lo': lo, ':hi': MARKS_END },
      ProjectionExpression: 'sk, ids, itemId, #at, expiresAt',
      ExpressionAttributeNames: { '#at': 'at' },
      ConsistentRead: true,
    });
    const byId = new Map<string, { id: string; at: string; marks: Array<{ sk: string; at?: string }> }>();
    for (const item of items) {
      const at = String(item.at);
      if (from !== undefined && at < from) continue;
      const single = typeof item.itemId === 'string';
      const ids = single ? [String(item.itemId)] : ((item.ids as string[] | undefined) ?? []);
      const marks =
        item.expiresAt !== undefined ? [] : [single ? { sk: String(item.sk), at } : { sk: String(item.sk) }];
      for (const id of ids) {
        const seen = byId.get(id);
        if (!seen) byId.set(id, { id, at, marks: [...marks] });
        else {
          // The newest mark's `at` (ISO time first: they sort by time).
          if (at > seen.at) seen.at = at;
          seen.marks.push(...marks);
        }
      }
    }
    return [...byId.values()];
  }

  async head(userId: string): Promise<SearchIndexHead> {
    const res = await this.ddb.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.ownerPk(userId), sk: keys.searchIndexSk },
        ConsistentRead: true,
      }),
    );
    if (!res.Item) return { version: 0, segments: [] };
    const head: SearchIndexHead = {
      version: Number(res.Item.version),
      segments: (res.Item.segments as SearchIndexHead['segments'] | undefined) ?? [],
    };
    // A pointer written before 2026-11-27 has no watermark: its readers read every mark.
    const turns = typeof res.Item.turnWatermark === 'number' ? { turnWatermark: res.Item.turnWatermark } : {};
    if (typeof res.Item.watermark !== 'string') return { ...head, ...turns };
    return {
      ...head,
      watermark: res.Item.watermark,
      ...(Array.isArray(res.Item.folded) ? { folded: res.Item.folded as string[] } : {}),
      ...turns,
    };
  }

  async segment({ key, parts }: { key: string; parts: number }): Promise<SearchSegment | null> {
    const cached = this.cache.get(key);
    if (cached) return cached.segment;
    try {
      const chunks = await Promise.all(
        Array.from({ length: parts }, async (_, i) => {
          const res = await this.s3.send(new GetObjectCommand({ Bucket: this.bucketName, Key: partKey(key, i) }));
          return (res.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
        }),
      );
      const bytes = chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
      const segment = segmentFromBytes(bytes);
      this.cache.set(key, { segment, bytes: bytes.length });
      return segment;
    } catch (error) {
      // A merge retired it after the pointer was read: the caller reads the pointer again.
      if (isMissingObject(error)) return null;
      throw error;
    }
  }

  async putSegment(userId: string, version: number, segment: SearchSegment): Promise<{ key: string; parts: number }> {
    const key = searchSegmentKey(userId, version, randomUUID().slice(0, 8));
    const bytes = segmentToBytes(segment);
    const parts = Math.max(1, Math.ceil(bytes.length / PART_BYTES));
    await Promise.all(
      Array.from({ length: parts }, (_, i) =>
        this.s3.send(
          new PutObjectCommand({
            Bucket: this.bucketName,
            Key: partKey(key, i),
            Body: bytes.subarray(i * PART_BYTES, (i + 1) * PART_BYTES),
            ContentType: 'application/octet-stream',
          }),
        ),
      ),
    );
    this.cache.set(key, { segment, bytes: bytes.length });
    return { key, parts };
  }

  async moveHead(userId: string, from: number, next: SearchIndexHead): Promise<boolean> {
    try {
      await this.ddb.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk: keys.ownerPk(userId),
            sk: keys.searchIndexSk,
            kind: 'search-index',
            version: next.version,
            segments: next.segments,
            ...(next.watermark ? { watermark: next.watermark } : {}),
            ...(next.folded?.length ? { folded: next.folded } : {}),
            ...(next.turnWatermark !== undefined ? { turnWatermark: next.turnWatermark } : {}),
          },
          ConditionExpression: from === 0 ? 'attribute_not_exists(pk)' : 'version = :from',
          ...(from === 0 ? {} : { ExpressionAttributeValues: { ':from': from } }),
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailure(error)) throw error;
      // Moved by another compaction, or by this very write whose answer was lost.
      const now = await this.head(userId);
      return (
        now.version === next.version &&
        now.watermark === next.watermark &&
        now.turnWatermark === next.turnWatermark &&
        JSON.stringify(now.segments) === JSON.stringify(next.segments)
      );
    }
  }

  /**
   * Gives the folded marks that have no TTL one (MARK_TTL_MS from now), so that DynamoDB
   * deletes them: marks written without one (by the API, the sweep, for GLOBAL, or before
   * 2026-11-27). Not a delete: a reader that read an older pointer may still need the mark,
   * and only TTL's month-late delete is sure to come after it. An UpdateItem each (1 write
   * unit, as their delete was), only if the mark is still there (an update of a missing key
   * would create it) and still has no TTL; a mark of the earlier per-item format only if its
   * `at` is still the one read (its writers rewrote it).
   */
  async expireChanges(userId: string, changes: readonly SearchChange[]): Promise<void> {
    const marks = [...new Map(changes.flatMap((c) => c.marks ?? []).map((m) => [m.sk, m])).values()];
    const expiresAt = Math.floor((Date.now() + MARK_TTL_MS) / 1000);
    for (let i = 0; i < marks.length; i += STAMPS_AT_ONCE) {
      await Promise.all(marks.slice(i, i + STAMPS_AT_ONCE).map((m) => this.stamp(userId, m, expiresAt)));
    }
  }

  private async stamp(userId: string, m: { sk: string; at?: string }, expiresAt: number): Promise<void> {
    try {
      await this.ddb.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keys.ownerPk(userId), sk: m.sk },
          UpdateExpression: 'SET expiresAt = :e',
          ConditionExpression: `attribute_exists(pk) AND attribute_not_exists(expiresAt)${m.at === undefined ? '' : ' AND #at = :at'}`,
          ...(m.at === undefined ? {} : { ExpressionAttributeNames: { '#at': 'at' } }),
          ExpressionAttributeValues: { ':e': expiresAt, ...(m.at === undefined ? {} : { ':at': m.at }) },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailure(error)) throw error;
    }
  }

  async deleteSegments(refs: ReadonlyArray<{ key: string; parts: number }>): Promise<void> {
    await Promise.all(
      refs.flatMap(({ key, parts }) =>
        Array.from({ length: parts }, (_, i) =>
          this.s3.send(new DeleteObjectCommand({ Bucket: this.bucketName, Key: partKey(key, i) })),
        ),
      ),
    );
    for (const { key } of refs) this.cache.delete(key);
  }
}

/**
 * Marks searchable items as changed, for the search index to pick up: the write every store
 * of a searchable item makes after its own, one item for all the ids of that write (a
 * put and a delete per changed item were the largest part of the pipeline's write units).
 * `at` is unique per mark (time and a random part), and the mark's key.
 *
 * `expiring` (the signal and reflector functions: the per-turn path) gives each mark the
 * table's TTL attribute, MARK_TTL_MS on: no compaction deletes it, DynamoDB does, without
 * consuming write throughput. Those owners are compacted well within that time (docs/search-index.md,
 * "Liveness"). Other writers (the API, the sweep) and every GLOBAL mark write marks without
 * one, which the compaction that folds them stamps (expireChanges): an owner no job reaches
 * can never lose a change to TTL.
 */
export class DynamoSearchChangeLog implements SearchChangeLog {
  private readonly expiring: boolean;
  private readonly now: () => Date;
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(storage: StorageTable, options: { expiring?: boolean; now?: () => Date } = {}) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
    this.expiring = options.expiring ?? false;
    this.now = options.now ?? (() => new Date());
  }

  async mark(userId: string, itemIds: readonly string[]): Promise<void> {
    await batchWriteAll(this.ddb, this.tableName, this.requests(userId, itemIds));
  }

  /** Marks of several owners' items as BatchWriteItem put requests, for a store that writes its items in the same batch. */
  requestsFor(marks: ReadonlyArray<{ userId: string; itemId: string }>): Array<Record<string, unknown>> {
    return [...new Set(marks.map((m) => m.userId))].flatMap((u) =>
      this.requests(
        u,
        marks.filter((m) => m.userId === u).map((m) => m.itemId),
      ),
    );
  }

  /** One owner's marks as BatchWriteItem put requests. */
  requests(userId: string, itemIds: readonly string[]): Array<Record<string, unknown>> {
    return this.items(userId, itemIds).map((Item) => ({ PutRequest: { Item } }));
  }

  /** One owner's marks as TransactWriteItems Puts, for a store that writes them with its item in one transaction. */
  transactPuts(
    userId: string,
    itemIds: readonly string[],
  ): Array<{ Put: { TableName: string; Item: Record<string, unknown> } }> {
    return this.items(userId, itemIds).map((Item) => ({ Put: { TableName: this.tableName, Item } }));
  }

  /**
   * One owner's marks: the ids packed into as few items as keep each under MARK_BYTES (one
   * write unit), each under a key of its own (`SEARCHCHANGE#{at}`, `at` unique per mark).
   */
  private items(userId: string, itemIds: readonly string[]): Array<Record<string, unknown>> {
    const now = this.now();
    const time = now.toISOString();
    // Epoch seconds, as DynamoDB's TTL reads them (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTimeToLive.html).
    const ttl =
      this.expiring && userId !== GLOBAL_USER ? { expiresAt: Math.floor((now.getTime() + MARK_TTL_MS) / 1000) } : {};
    return packIds([...new Set(itemIds)]).map((ids) => {
      const at = `${time}#${Math.random().toString(36).slice(2, 10)}`;
      return { pk: keys.ownerPk(userId), sk: keys.searchChangeSk(at), kind: 'search-change', ids, at, ...ttl };
    });
  }
}

/**
 * A mark's ids take at most this many bytes: with its keys and `at` the item stays under the
 * 1 KB a write unit covers (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
 */
export const MARK_BYTES = 880;

/** The ids in order, in groups of at most MARK_BYTES (an id longer than that alone). */
export function packIds(ids: readonly string[]): string[][] {
  const groups: string[][] = [];
  let group: string[] = [];
  let bytes = 0;
  for (const id of ids) {
    const size = Buffer.byteLength(id, 'utf8') + 1;
    if (group.length > 0 && bytes + size > MARK_BYTES) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(id);
    bytes += size;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}
