/**
 * Tombstones and forgotten turns in the user's partition (req R-DEL-2, R-DEL-4):
 * `TOMBSTONE#{key}` per key (its hash, when and nothing else) and `FORGOTTENTURNS`, a number
 * set grown with UpdateItem's ADD, which is atomic, so two forgets at once lose nothing and a
 * retried one changes nothing (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html#Expressions.UpdateExpressions.ADD).
 * Both are read strongly consistent: a job that starts after a forget's answer sees it
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../kernel/memory-paths.js';
import type { Tombstone } from './tombstone.js';
import type { ErasureLog } from './forget.port.js';
import { batchGetAll, batchWriteAll } from '../kernel/dynamo-query.adapter.js';
import type { StorageTable } from '../kernel/storage.adapter.js';

export class DynamoErasureLog implements ErasureLog {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(storage: StorageTable) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
  }

  async bury(userId: string, tombstones: readonly Tombstone[], at: string): Promise<void> {
    const pk = keys.userPk(userId);
    const byKey = new Map(tombstones.map((t) => [t.key, t]));
    await batchWriteAll(
      this.ddb,
      this.tableName,
      [...byKey.values()].map((t) => ({
        PutRequest: {
          Item: {
            pk,
            sk: keys.tombstoneSk(t.key),
            kind: 'tombstone',
            userId,
            at,
            ...(t.words ? { words: t.words } : {}),
          },
        },
      })),
    );
  }

  async buried(userId: string, tombstoneKeys: readonly string[]): Promise<Map<string, Tombstone>> {
    if (tombstoneKeys.length === 0) return new Map();
    const pk = keys.userPk(userId);
    const found = await batchGetAll(
      this.ddb,
      this.tableName,
      [...new Set(tombstoneKeys)].map((key) => ({ pk, sk: keys.tombstoneSk(key) })),
      { projection: 'sk, words', consistent: true },
    );
    return new Map(
      found.map((i) => {
        const key = String(i.sk).slice('TOMBSTONE#'.length);
        return [key, { key, ...(Array.isArray(i.words) ? { words: i.words.map(String) } : {}) }];
      }),
    );
  }

  async forgetTurns(userId: string, turnIds: readonly number[], at: string): Promise<void> {
    if (turnIds.length === 0) return;
    await this.ddb.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(userId), sk: keys.forgottenTurnsSk },
        UpdateExpression: 'ADD #t :t SET #k = :k, #u = :u, #at = :at',
        ExpressionAttributeNames: { '#t': 'turns', '#k': 'kind', '#u': 'userId', '#at': 'updatedAt' },
        ExpressionAttributeValues: { ':t': new Set(turnIds), ':k': 'forgotten-turns', ':u': userId, ':at': at },
      }),
    );
  }

  async forgottenTurns(userId: string): Promise<Set<number>> {
    const res = await this.ddb.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(userId), sk: keys.forgottenTurnsSk },
        ConsistentRead: true,
        ProjectionExpression: '#t',
        ExpressionAttributeNames: { '#t': 'turns' },
      }),
    );
    const turns = res.Item?.turns as Set<number> | undefined;
    return new Set(turns ? [...turns].map(Number) : []);
  }
}
