import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type MemoryItem, MemoryItemSchema } from '../domain/memory-item.js';
import { keys } from '../domain/memory-paths.js';
import type { AuditEntry } from '../domain/memory-tiers.js';
import type { AuditTrail, MemoryItemStore } from '../ports.js';
import { isConditionalCheckFailure } from './dynamo-errors.js';
import type { DynamoSearchChangeLog } from './search-index-store.js';
import { putOnce } from './dynamo-put-once.js';
import { batchGetAll, queryAll } from './dynamo-query.js';

/**
 * API-written memory items (`MEM#{id}` in the user's partition, or in `GLOBAL`), the item
 * as one map plus the table's TTL attribute (epoch seconds) when it expires, so DynamoDB
 * removes it eventually; readers filter expired items themselves until then.
 */
export class DynamoMemoryItemStore implements MemoryItemStore {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Marks the items written as changed for the search index (their owner's: a GLOBAL copy in GLOBAL's). */
    private readonly changes: DynamoSearchChangeLog,
  ) {}

  async get(userId: string, id: string): Promise<MemoryItem | null> {
    const res = await this.ddb.send(new GetCommand({ TableName: this.tableName, Key: { pk: keys.ownerPk(userId), sk: `MEM#${id}` }, ConsistentRead: true }));
    return res.Item ? toItem(res.Item) : null;
  }

  /** These items by id (a BatchGetItem per 100, consistent). */
  async getMany(userId: string, ids: readonly string[]): Promise<MemoryItem[]> {
    const items = await batchGetAll(this.ddb, this.tableName, [...new Set(ids)].map((id) => ({ pk: keys.ownerPk(userId), sk: `MEM#${id}` })), { consistent: true });
    return items.map(toItem);
  }

  async create(item: MemoryItem): Promise<{ item: MemoryItem; created: boolean }> {
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

  async list(userId: string): Promise<MemoryItem[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.ownerPk(userId), ':p': 'MEM#' },
    });
    return items.map(toItem);
  }
}

/** The audit trail: `AUDIT#{at}#{itemId}#{action}` items in the user's (or GLOBAL's) partition. */
export class DynamoAuditTrail implements AuditTrail {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async append(entries: readonly AuditEntry[]): Promise<void> {
    // Keyed by time, item and action: a retried request rewrites the same entry, not a second one.
    await Promise.all(
      entries.map((e) =>
        this.ddb.send(new PutCommand({ TableName: this.tableName, Item: { pk: keys.ownerPk(e.userId), sk: `AUDIT#${e.at}#${e.itemId}#${e.action}`, type: 'audit', entry: e } })),
      ),
    );
  }

  async list(userId: string, options: { itemId?: string | undefined; limit: number }): Promise<AuditEntry[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.ownerPk(userId), ':p': 'AUDIT#' },
      ScanIndexForward: false,
    });
    return items
      .map((i) => i.entry as AuditEntry)
      .filter((e) => options.itemId === undefined || e.itemId === options.itemId)
      .slice(0, options.limit);
  }
}

/** The table item of a memory item (benchmarks seed items with it). */
export function memoryItemRow(item: MemoryItem): Record<string, unknown> {
  return {
    pk: keys.ownerPk(item.userId),
    sk: `MEM#${item.id}`,
    type: 'memory',
    item,
    ...(item.expiresAt ? { expiresAt: Math.ceil(Date.parse(item.expiresAt) / 1000) } : {}),
  };
}

function toItem(i: Record<string, unknown>): MemoryItem {
  return MemoryItemSchema.parse(i.item);
}
