/**
 * The user's knowledge index — the snapshot of promoted Knowledge the reflector searches and
 * the API serves — written by the reflector and by the API at once, so every write is
 * conditional and none is lost.
 *
 * The snapshot is an immutable S3 object per version (`index/knowledge/{version}-{hash}.json`)
 * and a DynamoDB item points at the current one (`KNOWLEDGEINDEX`: version and key). A write
 * reads the pointer and the snapshot, applies its change to what it read, puts the new
 * version's object, and moves the pointer only if it still names the version it read (a
 * DynamoDB condition, which DynamoDB Local enforces as AWS does). A writer that lost the race
 * deletes its object and applies its change again to the winner's snapshot. S3's own
 * conditional writes (If-Match) would do the same in one store, but the local S3 emulator
 * does not implement them, so the local harness could not show the race; DynamoDB's
 * conditions it can.
 *
 * A warm container keeps the snapshots it read and re-reads one only when the pointer —
 * one small consistent read — names a newer version.
 */
import { createHash } from 'node:crypto';
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { RecentCache } from '../kernel/recent-cache.js';
import type { KnowledgeDoc } from './knowledge.js';
import { keys, knowledgeIndexKey, knowledgePrefix } from '../kernel/memory-paths.js';
import type { KnowledgeIndexChange } from './knowledge.port.js';
import { isConditionalCheckFailure } from '../kernel/dynamo-errors.adapter.js';
import { getText, isMissingObject } from '../kernel/s3-objects.adapter.js';
import type { Storage, SearchChangeLog } from '../kernel/storage.adapter.js';

interface Snapshot {
  version: number;
  key: string | null;
  docs: readonly KnowledgeDoc[];
}

/**
 * Writers that lost this many races in a row give up (the job or request is retried). Each
 * win is serialised through the pointer, so with n writers at once the last may lose n − 1
 * races: 16 attempts with backoff capped at MAX_BACKOFF_MS outlast 30 concurrent writers (the
 * concurrency test; in practice the reflector writes one job per user at a time) within the
 * API's 29 s.
 */
const MAX_ATTEMPTS = 16;
const MAX_BACKOFF_MS = 800;
/** Snapshots a warm container keeps, by user. */
const CACHED_USERS = 64;

export class KnowledgeIndexConflictError extends Error {
  override readonly name = 'KnowledgeIndexConflictError';
}

export class DynamoS3KnowledgeIndex {
  /** By user, least recently used first out. */
  private readonly cache = new RecentCache<string, Snapshot>({ max: CACHED_USERS });
  private readonly ddb: DynamoDBDocumentClient;
  private readonly s3: S3Client;
  private readonly tableName: string;
  private readonly bucketName: string;
  /** Marks the documents a write changed or removed, for the search index. */
  private readonly changes: SearchChangeLog;

  constructor(storage: Storage) {
    this.ddb = storage.ddb;
    this.s3 = storage.s3;
    this.tableName = storage.tableName;
    this.bucketName = storage.bucketName;
    this.changes = storage.changes;
  }

  async load(userId: string): Promise<readonly KnowledgeDoc[]> {
    return (await this.snapshot(userId)).docs;
  }

  /** Apply `change` to the current index and write the result, again on a newer one if another writer won. */
  async update<R>(userId: string, change: (docs: readonly KnowledgeDoc[]) => KnowledgeIndexChange<R>): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.snapshot(userId);
      const changed = change(current.docs);
      // In id order: concurrent writers then reach the same snapshot (and content hash) whatever their order.
      const next =
        changed.docs === undefined
          ? changed
          : { ...changed, docs: [...changed.docs].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) };
      const body = next.docs === undefined ? undefined : JSON.stringify({ format: 2, docs: next.docs });
      if (body === undefined || body === JSON.stringify({ format: 2, docs: current.docs })) return next.result;
      // Documents first: a crash in between leaves index entries whose removal the next sweep redoes.
      await Promise.all((next.remove ?? []).map((path) => this.delete(`${knowledgePrefix(userId)}${path}`)));
      const version = current.version + 1;
      const key = knowledgeIndexKey(userId, version, createHash('sha256').update(body).digest('hex').slice(0, 16));
      await this.s3.send(
        new PutObjectCommand({ Bucket: this.bucketName, Key: key, Body: body, ContentType: 'application/json' }),
      );
      if (await this.movePointer(userId, current, version, key)) {
        this.cache.set(userId, { version, key, docs: next.docs ?? [] });
        await this.changes.mark(userId, changedIds(current.docs, next.docs ?? []));
        if (current.key && current.key !== key) await this.delete(current.key);
        return next.result;
      }
      await this.delete(key);
      if (attempt >= MAX_ATTEMPTS)
        throw new KnowledgeIndexConflictError(
          `the knowledge index of ${userId} kept changing under ${attempt} attempts to write it`,
        );
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(MAX_BACKOFF_MS, 25 * 2 ** attempt)));
    }
  }

  /** Point at `key` if the pointer still names `from`; true when it does now (a retried write whose answer was lost included). */
  private async movePointer(userId: string, from: Snapshot, version: number, key: string): Promise<boolean> {
    try {
      await this.ddb.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keys.userPk(userId), sk: keys.knowledgeIndexSk },
          UpdateExpression: 'SET #v = :v, #key = :k, #kind = :kind',
          ConditionExpression: from.version === 0 ? 'attribute_not_exists(pk)' : '#v = :from',
          ExpressionAttributeNames: { '#v': 'version', '#key': 'key', '#kind': 'kind' },
          ExpressionAttributeValues: {
            ':v': version,
            ':k': key,
            ':kind': 'knowledge-index',
            ...(from.version === 0 ? {} : { ':from': from.version }),
          },
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailure(error)) throw error;
      // The pointer moved: by another writer, or by this very write whose answer was lost.
      return (await this.pointer(userId))?.key === key;
    }
  }

  private async pointer(userId: string): Promise<{ version: number; key: string } | null> {
    const res = await this.ddb.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(userId), sk: keys.knowledgeIndexSk },
        ConsistentRead: true,
      }),
    );
    return res.Item ? { version: Number(res.Item.version), key: String(res.Item.key) } : null;
  }

  /** The current snapshot: from the cache when the pointer has not moved since it was read. */
  private async snapshot(userId: string): Promise<Snapshot> {
    for (let attempt = 1; ; attempt++) {
      const pointer = await this.pointer(userId);
      if (!pointer) return { version: 0, key: null, docs: [] };
      const cached = this.cache.get(userId);
      if (cached?.version === pointer.version && cached.key === pointer.key) return cached;
      try {
        const docs =
          (JSON.parse(await getText(this.s3, this.bucketName, pointer.key)) as { docs?: KnowledgeDoc[] }).docs ?? [];
        const snapshot = { ...pointer, docs };
        this.cache.set(userId, snapshot);
        return snapshot;
      } catch (error) {
        // A newer writer retired this version between the two reads: read the pointer again.
        if (!isMissingObject(error) || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
  }

  private async delete(key: string): Promise<void> {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucketName, Key: key }));
  }
}

/** The search ids of the documents that differ between two versions (added, changed, removed). */
function changedIds(before: readonly KnowledgeDoc[], after: readonly KnowledgeDoc[]): string[] {
  const old = new Map(before.map((d) => [d.id, JSON.stringify(d)]));
  const now = new Map(after.map((d) => [d.id, JSON.stringify(d)]));
  return [...new Set([...old.keys(), ...now.keys()])]
    .filter((id) => old.get(id) !== now.get(id))
    .map((id) => `knowledge:${id}`);
}
