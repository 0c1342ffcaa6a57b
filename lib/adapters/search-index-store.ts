/**
 * Where a user's search index lives (issue 18), and how its writers stay out of each other's way.
 *
 * - Segments: immutable S3 objects (`users/{u}/index/search/{version}-{writer}.seg.{part}`), the bytes
 *   of lib/domain/search-segment.ts in parts of at most PART_BYTES, read in parallel (AWS's
 *   advice for throughput: https://docs.aws.amazon.com/AmazonS3/latest/userguide/optimizing-performance-guidelines.html;
 *   the local S3 emulator also refuses a body over 11 MiB). A warm container keeps the
 *   segments it read: a key never changes content.
 * - The pointer (`SEARCHINDEX` in the owner's partition): the index version and its segments,
 *   oldest first, each with the ids it removes from older ones. Moved only by a conditional
 *   write naming the version the writer read, as the knowledge index's pointer is
 *   (knowledge-index.ts), so two compactions never both win.
 * - Changes (`SEARCHCHANGE#{at}`): every store that writes searchable items marks them here
 *   after its own write (DynamoSearchChangeLog): one mark per write for all the ids it
 *   changed (packed a KB to an item), under a key unique to the mark. A compaction folds the
 *   marked items into a new segment and then deletes the marks it read, without a condition:
 *   a change made during the compaction wrote a mark of its own, kept for the next.
 *
 * Readers read the changes first and the pointer second, both strongly consistent: a change a
 * compaction deleted before the reader's first read was folded into a segment the pointer
 * named before that delete, so the reader's pointer read sees it (or a later one). Strongly
 * consistent reads see every write acknowledged before them
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html),
 * and S3 is strongly consistent for reads after writes
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/Welcome.html#ConsistencyModel).
 */
import { randomUUID } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { LRUCache } from 'lru-cache';
import { keys, searchSegmentKey } from '../domain/memory-paths.js';
import { type SearchSegment, segmentFromBytes, segmentToBytes } from '../domain/search-segment.js';
import type { SearchChange, SearchIndexHead, SearchIndexStore } from '../ports.js';
import { isConditionalCheckFailure } from './dynamo-errors.js';
import { batchWriteAll, queryAll } from './dynamo-query.js';
import { isMissingObject } from './s3-objects.js';

/**
 * Segments a warm container keeps (the large base of a few users, and their small deltas),
 * least recently used first out: at most this many, and at most CACHED_BYTES of their bytes
 * (a base of months of history is megabytes; the API and reflector have 512 MB).
 */
const CACHED_SEGMENTS = 48;
const CACHED_BYTES = 96 * 1024 * 1024;
/** The largest object a segment is split into. */
export const PART_BYTES = 8 * 1024 * 1024;
const partKey = (key: string, part: number) => `${key}.${part}`;

export class DynamoS3SearchIndexStore implements SearchIndexStore {
  /** By key (a key never changes content), sized by the segment's bytes as stored. */
  private readonly cache = new LRUCache<string, { segment: SearchSegment; bytes: number }>({ max: CACHED_SEGMENTS, maxSize: CACHED_BYTES, sizeCalculation: (e) => Math.max(1, e.bytes) });

  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly s3: S3Client,
    private readonly tableName: string,
    private readonly bucketName: string,
  ) {}

  /**
   * Every id the owner's marks carry, once, with its newest mark's `at` and the marks that
   * carry it (a mark of an earlier format carries one id under its own key and is deleted on
   * its `at`, as it was written).
   */
  async changes(userId: string): Promise<SearchChange[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.ownerPk(userId), ':p': keys.searchChangePrefix },
      ProjectionExpression: 'sk, ids, itemId, #at',
      ExpressionAttributeNames: { '#at': 'at' },
      ConsistentRead: true,
    });
    const byId = new Map<string, { id: string; at: string; marks: Array<{ sk: string; at?: string }> }>();
    for (const item of items) {
      const at = String(item.at);
      const single = typeof item.itemId === 'string';
      const ids = single ? [String(item.itemId)] : ((item.ids as string[] | undefined) ?? []);
      const mark = single ? { sk: String(item.sk), at } : { sk: String(item.sk) };
      for (const id of ids) {
        const seen = byId.get(id);
        if (!seen) byId.set(id, { id, at, marks: [mark] });
        else {
          // The newest mark's `at` (ISO time first: they sort by time).
          if (at > seen.at) seen.at = at;
          seen.marks.push(mark);
        }
      }
    }
    return [...byId.values()];
  }

  async head(userId: string): Promise<SearchIndexHead> {
    const res = await this.ddb.send(new GetCommand({ TableName: this.tableName, Key: { pk: keys.ownerPk(userId), sk: keys.searchIndexSk }, ConsistentRead: true }));
    if (!res.Item) return { version: 0, segments: [] };
    return { version: Number(res.Item.version), segments: (res.Item.segments as SearchIndexHead['segments'] | undefined) ?? [] };
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
        this.s3.send(new PutObjectCommand({ Bucket: this.bucketName, Key: partKey(key, i), Body: bytes.subarray(i * PART_BYTES, (i + 1) * PART_BYTES), ContentType: 'application/octet-stream' })),
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
          Item: { pk: keys.ownerPk(userId), sk: keys.searchIndexSk, kind: 'search-index', version: next.version, segments: next.segments },
          ConditionExpression: from === 0 ? 'attribute_not_exists(pk)' : 'version = :from',
          ...(from === 0 ? {} : { ExpressionAttributeValues: { ':from': from } }),
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailure(error)) throw error;
      // Moved by another compaction, or by this very write whose answer was lost.
      const now = await this.head(userId);
      return now.version === next.version && JSON.stringify(now.segments) === JSON.stringify(next.segments);
    }
  }

  /**
   * Deletes the marks these changes were read from. A mark's key is unique to it (its `at`)
   * and never written again, so a change made after the read is in another mark and the
   * deletes need no condition: BatchWriteItem, 25 to a request. A mark of the earlier format
   * (one per item, rewritten by each change) is deleted only if its `at` is still the one
   * read — one DeleteItem each, as BatchWriteItem takes no conditions
   * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html).
   */
  async clearChanges(userId: string, changes: readonly SearchChange[]): Promise<void> {
    const marks = new Map(changes.flatMap((c) => c.marks ?? []).map((m) => [m.sk, m]));
    const unique = [...marks.values()].filter((m) => m.at === undefined);
    await batchWriteAll(
      this.ddb,
      this.tableName,
      unique.map((m) => ({ DeleteRequest: { Key: { pk: keys.ownerPk(userId), sk: m.sk } } })),
    );
    await Promise.all(
      [...marks.values()]
        .filter((m) => m.at !== undefined)
        .map(async (m) => {
          try {
            await this.ddb.send(
              new DeleteCommand({
                TableName: this.tableName,
                Key: { pk: keys.ownerPk(userId), sk: m.sk },
                ConditionExpression: '#at = :at',
                ExpressionAttributeNames: { '#at': 'at' },
                ExpressionAttributeValues: { ':at': m.at },
              }),
            );
          } catch (error) {
            if (!isConditionalCheckFailure(error)) throw error;
          }
        }),
    );
  }

  async deleteSegments(refs: ReadonlyArray<{ key: string; parts: number }>): Promise<void> {
    await Promise.all(refs.flatMap(({ key, parts }) => Array.from({ length: parts }, (_, i) => this.s3.send(new DeleteObjectCommand({ Bucket: this.bucketName, Key: partKey(key, i) })))));
    for (const { key } of refs) this.cache.delete(key);
  }
}

/**
 * Marks searchable items as changed, for the search index to pick up: the write every store
 * of a searchable item makes after its own, one item for all the ids of that write (issue 19:
 * a put and a delete per changed item were the largest part of the pipeline's write units).
 * `at` is unique per mark (time and a random part), and the mark's key.
 */
export class DynamoSearchChangeLog {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

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
  transactPuts(userId: string, itemIds: readonly string[]): Array<{ Put: { TableName: string; Item: Record<string, unknown> } }> {
    return this.items(userId, itemIds).map((Item) => ({ Put: { TableName: this.tableName, Item } }));
  }

  /**
   * One owner's marks: the ids packed into as few items as keep each under MARK_BYTES (one
   * write unit), each under a key of its own (`SEARCHCHANGE#{at}`, `at` unique per mark).
   */
  private items(userId: string, itemIds: readonly string[]): Array<Record<string, unknown>> {
    const time = new Date().toISOString();
    return packIds([...new Set(itemIds)]).map((ids) => {
      const at = `${time}#${Math.random().toString(36).slice(2, 10)}`;
      return { pk: keys.ownerPk(userId), sk: keys.searchChangeSk(at), kind: 'search-change', ids, at };
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
