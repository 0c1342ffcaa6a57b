import { createHash } from 'node:crypto';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { type MemoryItem, MemoryItemSchema } from './memory-item.js';
import { dayGsiPartitions, keys } from '../kernel/memory-paths.js';
import type { AuditEntry } from '../tiers/memory-tiers.js';
import type { AuditTrail, MemoryItemStore } from './memory-item.port.js';
import { isCancelledByCondition, isConditionalCheckFailure } from '../kernel/dynamo-errors.adapter.js';
import { putOnce } from '../kernel/dynamo-put-once.adapter.js';
import { batchGetAll, queryAll, queryFirst } from '../kernel/dynamo-query.adapter.js';
import type { Storage, StorageTable, SearchChangeLog } from '../kernel/storage.adapter.js';

/**
 * API-written memory items (`MEM#{id}` in the user's partition, or in `GLOBAL`), the item
 * as one map plus the table's TTL attribute (epoch seconds) when it expires, so DynamoDB
 * removes it eventually; readers filter expired items themselves until then.
 */
export class DynamoMemoryItemStore implements MemoryItemStore {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;
  /** Marks the items written as changed for the search index (their owner's: a GLOBAL copy in GLOBAL's). */
  private readonly changes: SearchChangeLog;

  constructor(storage: Pick<Storage, 'ddb' | 'tableName' | 'changes'>) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
    this.changes = storage.changes;
  }

  async get(userId: string, id: string): Promise<MemoryItem | null> {
    const res = await this.ddb.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.ownerPk(userId), sk: keys.memorySk(id) },
        ConsistentRead: true,
      }),
    );
    return res.Item ? toItem(res.Item) : null;
  }

  /** These items by id (a BatchGetItem per 100, consistent). */
  async getMany(userId: string, ids: readonly string[]): Promise<MemoryItem[]> {
    const items = await batchGetAll(
      this.ddb,
      this.tableName,
      [...new Set(ids)].map((id) => ({ pk: keys.ownerPk(userId), sk: keys.memorySk(id) })),
      { consistent: true },
    );
    return items.map(toItem);
  }

  async create(item: MemoryItem): Promise<{ item: MemoryItem; created: boolean }> {
    // Named in its session's list before it exists: a crash between the two leaves a name of nothing, never an entry the close misses.
    if (item.tier === 'ephemeral' && item.sessionId !== undefined) await this.nameInSession(item, item.sessionId);
    const created = await putOnce(this.ddb, this.tableName, memoryItemRow(item));
    // Marked on a repeat too: the first attempt may have died between its write and its mark.
    await this.changes.mark(item.userId, [item.id]);
    if (created) return { item, created };
    const existing = await this.get(item.userId, item.id);
    if (!existing) throw new Error(`memory item ${item.id} of ${item.userId} vanished during a create`);
    return { item: existing, created: false };
  }

  async replace(item: MemoryItem, expectedUpdatedAt: string): Promise<boolean> {
    try {
      await this.ddb.send(
        new PutCommand({
          TableName: this.tableName,
          Item: memoryItemRow(item),
          ConditionExpression: 'attribute_exists(pk) AND #i.updatedAt = :u',
          ExpressionAttributeNames: { '#i': 'item' },
          ExpressionAttributeValues: { ':u': expectedUpdatedAt },
        }),
      );
      await this.changes.mark(item.userId, [item.id]);
      return true;
    } catch (error) {
      if (isConditionalCheckFailure(error)) return false;
      throw error;
    }
  }

  /**
   * The item replaced (if unchanged since `expectedUpdatedAt`), its audit entry and its search
   * change mark in one TransactWriteItems, so a retry after a crash never finds the move done
   * and its audit entry missing. A transaction needs the permissions of the writes it holds,
   * here dynamodb:PutItem (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
   * False when the item changed meanwhile, or another transaction held it (TransactionConflict).
   */
  async move(item: MemoryItem, expectedUpdatedAt: string, audit: AuditEntry): Promise<boolean> {
    try {
      await this.ddb.send(
        new TransactWriteCommand({
          // The SDK retries a request whose answer was lost; the same token makes that retry a no-op
          // success instead of a failed condition (idempotent for 10 minutes:
          // https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
          // The token covers the whole move: two different moves from the same version (two
          // contradictions at once) would otherwise share a token, and the second would get
          // IdempotentParameterMismatch (same page) instead of a failed condition and a reread.
          ClientRequestToken: requestToken([
            item.userId,
            item.id,
            expectedUpdatedAt,
            JSON.stringify(audit),
            JSON.stringify(item),
          ]),
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: memoryItemRow(item),
                ConditionExpression: 'attribute_exists(pk) AND #i.updatedAt = :u',
                ExpressionAttributeNames: { '#i': 'item' },
                ExpressionAttributeValues: { ':u': expectedUpdatedAt },
              },
            },
            { Put: { TableName: this.tableName, Item: auditRow(audit) } },
            ...this.changes.transactPuts(item.userId, [item.id]),
          ],
        }),
      );
      return true;
    } catch (error) {
      if (isCancelledByCondition(error)) return false;
      throw error;
    }
  }

  /** Every owner's live items that expire on `day` (UTC), from the write-sharded by-day index. */
  async expiringOn(day: string): Promise<MemoryItem[]> {
    const shards = await Promise.all(
      dayGsiPartitions('TIEREXP', day).map((p) =>
        queryAll(this.ddb, {
          TableName: this.tableName,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :d',
          ExpressionAttributeValues: { ':d': p },
        }),
      ),
    );
    return shards.flat().map(toItem);
  }

  /** The ids of the ephemeral entries written in a session. */
  async sessionEphemera(userId: string, sessionId: string): Promise<string[]> {
    const res = await this.ddb.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.ownerPk(userId), sk: keys.sessionEphemeraSk(sessionId) },
        ConsistentRead: true,
      }),
    );
    const ids = res.Item?.ids as Set<string> | undefined;
    return ids ? [...ids].sort() : [];
  }

  /** ADD to a string set: a retry adds nothing. It lives as long as the entries it names (the table's TTL). */
  private async nameInSession(item: MemoryItem, sessionId: string): Promise<void> {
    const ttl = ttlOf(item);
    await this.ddb.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.ownerPk(item.userId), sk: keys.sessionEphemeraSk(sessionId) },
        UpdateExpression: ttl === undefined ? 'ADD ids :id' : 'ADD ids :id SET expiresAt = :t',
        ExpressionAttributeValues: { ':id': new Set([item.id]), ...(ttl === undefined ? {} : { ':t': ttl }) },
      }),
    );
  }

  async list(userId: string): Promise<MemoryItem[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.ownerPk(userId), ':p': keys.memoryPrefix },
    });
    return items.map(toItem);
  }
}

/** The audit trail: `AUDIT#{at}#{itemId}#{action}` items in the user's (or GLOBAL's) partition. */
export class DynamoAuditTrail implements AuditTrail {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(storage: StorageTable) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
  }

  async append(entries: readonly AuditEntry[]): Promise<void> {
    // Keyed by time, item and action: a retried request rewrites the same entry, not a second one.
    await Promise.all(
      entries.map((e) => this.ddb.send(new PutCommand({ TableName: this.tableName, Item: auditRow(e) }))),
    );
  }

  async appendOnce(entry: AuditEntry): Promise<void> {
    await putOnce(this.ddb, this.tableName, auditRow(entry));
  }

  /**
   * The newest `limit` entries (of one item, with `itemId`): a descending Query that stops at
   * the page (`queryFirst`), not the whole trail. An item's entries are picked by a filter, read
   * and billed like the others (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.FilterExpression.html),
   * so that read goes as far back as the item's `limit`th entry.
   */
  async list(userId: string, options: { itemId?: string | undefined; limit: number }): Promise<AuditEntry[]> {
    const ofItem =
      options.itemId === undefined
        ? {}
        : { FilterExpression: '#e.itemId = :item', ExpressionAttributeNames: { '#e': 'entry' } };
    const items = await queryFirst(
      this.ddb,
      {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: {
          ':pk': keys.ownerPk(userId),
          ':p': keys.auditPrefix,
          ...(options.itemId === undefined ? {} : { ':item': options.itemId }),
        },
        ...ofItem,
        ScanIndexForward: false,
      },
      options.limit,
    );
    return items.map((i) => i.entry as AuditEntry);
  }

  /**
   * The user's entries that keep an edit's old text, read with a filter (billed as the whole
   * trail is read: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.FilterExpression.html),
   * and those of the deleted items rewritten without it. Deletions are rare; edits rarer still.
   */
  async dropWords(userId: string, itemIds: readonly string[]): Promise<number> {
    if (itemIds.length === 0) return 0;
    const ids = new Set(itemIds);
    const rows = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      FilterExpression: 'attribute_exists(#e.previous)',
      ExpressionAttributeNames: { '#e': 'entry' },
      ExpressionAttributeValues: { ':pk': keys.ownerPk(userId), ':p': keys.auditPrefix },
    });
    const mine = rows.filter((r) => ids.has((r.entry as AuditEntry).itemId));
    await Promise.all(
      mine.map((r) =>
        this.ddb
          .send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: { pk: r.pk, sk: r.sk },
              UpdateExpression: 'REMOVE #e.previous',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeNames: { '#e': 'entry' },
            }),
          )
          .catch((error: unknown) => {
            // The entry went meanwhile (the user forgotten whole): nothing left to drop.
            if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
          }),
      ),
    );
    return mine.length;
  }
}

/** A TransactWriteItems ClientRequestToken (1–36 characters) naming one intended change. */
export const requestToken = (parts: readonly string[]): string =>
  createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 36);

/** Keyed by time, item and action: a retried request rewrites the same entry, not a second one. */
export const auditRow = (e: AuditEntry): Record<string, unknown> => ({
  pk: keys.ownerPk(e.userId),
  sk: keys.auditSk(e),
  type: 'audit',
  entry: e,
});

/**
 * Days the table's TTL waits past an item's expiry. Readers hide an expired item at once
 * (isLive); the daily expiry sweep records its expiry in the audit trail (sweeps.ts), then
 * DynamoDB's TTL removes it, "typically within a few days"
 * of the time it names (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html).
 */
export const TTL_GRACE_DAYS = 14;

const ttlOf = (item: MemoryItem): number | undefined =>
  item.expiresAt ? Math.ceil(Date.parse(item.expiresAt) / 1000) + TTL_GRACE_DAYS * 86_400 : undefined;

/** The table item of a memory item (benchmarks seed items with it): a live one that expires is in the by-day index of its expiry. */
export function memoryItemRow(item: MemoryItem): Record<string, unknown> {
  const ttl = ttlOf(item);
  const expiring = item.expiresAt !== null && !item.deleted;
  return {
    pk: keys.ownerPk(item.userId),
    sk: keys.memorySk(item.id),
    type: 'memory',
    item,
    ...(ttl === undefined ? {} : { expiresAt: ttl }),
    ...(expiring && item.expiresAt
      ? {
          gsi1pk: keys.tierExpiryGsiPk(item.expiresAt.slice(0, 10), item.userId),
          gsi1sk: keys.tierExpiryGsiSk(item.expiresAt, item.userId, item.id),
        }
      : {}),
  };
}

function toItem(i: Record<string, unknown>): MemoryItem {
  return MemoryItemSchema.parse(i.item);
}
