/**
 * Tombstones and forgotten turns in the user's partition (req R-DEL-2, R-DEL-4):
 * `TOMBSTONE#{key}` per key (its hash, when and nothing else) and `FORGOTTENTURNS`, a number
 * set grown with UpdateItem's ADD, which is atomic, so two forgets at once lose nothing and a
 * retried one changes nothing (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html#Expressions.UpdateExpressions.ADD).
 * Both are read strongly consistent: a job that starts after a forget's answer sees it
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../domain/memory-paths.js';
import type { ErasureLog } from '../ports.js';
import { batchGetAll, batchWriteAll } from './dynamo-query.js';

export class DynamoErasureLog implements ErasureLog {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async bury(userId: string, tombstones: readonly string[], at: string): Promise<void> {
    const pk = keys.userPk(userId);
    await batchWriteAll(
      this.ddb,
      this.tableName,
      [...new Set(tombstones)].map((key) => ({ PutRequest: { Item: { pk, sk: keys.tombstoneSk(key), kind: 'tombstone', userId, at } } })),
    );
  }

  async buried(userId: string, tombstones: readonly string[]): Promise<Set<string>> {
    if (tombstones.length === 0) return new Set();
    const pk = keys.userPk(userId);
    const found = await batchGetAll(this.ddb, this.tableName, [...new Set(tombstones)].map((key) => ({ pk, sk: keys.tombstoneSk(key) })), { projection: 'sk', consistent: true });
    return new Set(found.map((i) => String(i.sk).slice('TOMBSTONE#'.length)));
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
    const res = await this.ddb.send(new GetCommand({ TableName: this.tableName, Key: { pk: keys.userPk(userId), sk: keys.forgottenTurnsSk }, ConsistentRead: true, ProjectionExpression: '#t', ExpressionAttributeNames: { '#t': 'turns' } }));
    const turns = res.Item?.turns as Set<number> | undefined;
    return new Set(turns ? [...turns].map(Number) : []);
  }
}
