import { randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../kernel/memory-paths.js';
import type { AuditEntry } from '../tiers/memory-tiers.js';
import type { ItemTrust } from './scope-trust.js';
import type { ItemTrustStore } from './item-trust.port.js';
import { isCancelledByCondition } from '../kernel/dynamo-errors.adapter.js';
import { batchGetAll } from '../kernel/dynamo-query.adapter.js';
import { auditRow, requestToken } from '../items/memory-item-store.adapter.js';
import type { Storage, SearchChangeLog } from '../kernel/storage.adapter.js';

/**
 * The trust of derived items (req R-SCOPE-2): `TRUST#{itemId}` in the owner's partition, an
 * item of a few dozen bytes (one write unit, half a read unit eventually consistent, one
 * consistent), written only when an outcome moves it. Read by id for the items a search
 * index folds and for an outcome; a search's page reads none (docs/memory-api.md, "Trust").
 */
export class DynamoItemTrustStore implements ItemTrustStore {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;
  /** Marks the item whose trust moved as changed for the search index. */
  private readonly changes: SearchChangeLog;

  constructor(storage: Pick<Storage, 'ddb' | 'tableName' | 'changes'>) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
    this.changes = storage.changes;
  }

  /** A BatchGetItem per 100, consistent: an outcome decides on what the last one wrote. */
  async get(userId: string, ids: readonly string[]): Promise<Map<string, ItemTrust>> {
    if (ids.length === 0) return new Map();
    const rows = await batchGetAll(
      this.ddb,
      this.tableName,
      [...new Set(ids)].map((id) => ({ pk: keys.ownerPk(userId), sk: keys.trustSk(id) })),
      { consistent: true },
    );
    return new Map(
      rows.map((r) => [String(r.itemId), { adjustment: Number(r.adjustment), outcomes: Number(r.outcomes) }]),
    );
  }

  /**
   * The record (if it still counts `expected` outcomes), the audit entry and the item's search
   * change mark in one TransactWriteItems: a trust that moved is always audited and marked, and
   * of two outcomes at once one is cancelled by the condition and decides again on what the
   * other wrote, so both count. A transaction's Put is authorized as dynamodb:PutItem
   * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html);
   * a failed condition or another transaction on the same item cancels it with
   * ConditionalCheckFailed or TransactionConflict
   * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
   */
  async record(userId: string, itemId: string, expected: number, next: ItemTrust, audit: AuditEntry): Promise<boolean> {
    try {
      await this.ddb.send(
        new TransactWriteCommand({
          // Makes the SDK's own retry of this request, whose answer was lost, a no-op success. Unique
          // per call: two outcomes at once that read the same record must not share a token, or the
          // second would be taken for a retry of the first and not counted.
          ClientRequestToken: requestToken([userId, itemId, String(expected), randomUUID()]),
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: {
                  pk: keys.ownerPk(userId),
                  sk: keys.trustSk(itemId),
                  type: 'trust',
                  itemId,
                  adjustment: next.adjustment,
                  outcomes: next.outcomes,
                  updatedAt: audit.at,
                },
                ConditionExpression: expected === 0 ? 'attribute_not_exists(pk)' : 'outcomes = :n',
                ...(expected === 0 ? {} : { ExpressionAttributeValues: { ':n': expected } }),
              },
            },
            { Put: { TableName: this.tableName, Item: auditRow(audit) } },
            ...this.changes.transactPuts(userId, [itemId]),
          ],
        }),
      );
      return true;
    } catch (error) {
      if (isCancelledByCondition(error)) return false;
      throw error;
    }
  }
}
