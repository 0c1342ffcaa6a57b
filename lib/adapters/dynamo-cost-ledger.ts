import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CostEntry } from '../domain/daily-cost.js';
import { dayGsiPartitions, keys } from '../domain/memory-paths.js';
import type { CostLedger } from '../ports.js';
import { queryAll } from './dynamo-query.js';
import { putOnce } from './dynamo-put-once.js';

/**
 * The cost ledger: an item per job in the user's partition (`COST#{day}#{jobId}`, so a user's
 * days are one range query), also in the write-sharded by-day partitions of gsi1
 * (`COSTDAY#{day}#{shard}`) for the stage's total of a day. Written once (a conditional put:
 * a redelivered job leaves the first entry). Entries are kept (≈ 400 bytes a job); no TTL, as
 * a TTL counted from the job's day deletes at once what a replay of old conversations records
 * (DynamoDB deletes items whose TTL has passed by the wall clock).
 */
export class DynamoCostLedger implements CostLedger {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async record(entry: CostEntry): Promise<void> {
    await putOnce(this.ddb, this.tableName, {
      pk: keys.userPk(entry.userId),
      sk: keys.costSk(entry.day, entry.jobId),
      type: 'cost',
      gsi1pk: keys.costDayGsiPk(entry.day, entry.userId),
      gsi1sk: keys.costDayGsiSk(entry.userId, entry.jobId),
      entry,
    });
  }

  async forUser(userId: string, fromDay: string, toDay: string): Promise<CostEntry[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :a AND :b',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':a': `${keys.costPrefix}${fromDay}`, ':b': `${keys.costPrefix}${toDay}#\uffff` },
    });
    return items.map((i) => i.entry as CostEntry);
  }

  async forDay(day: string): Promise<CostEntry[]> {
    const shards = await Promise.all(
      dayGsiPartitions('COSTDAY', day).map((p) =>
        queryAll(this.ddb, { TableName: this.tableName, IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :d', ExpressionAttributeValues: { ':d': p } }),
      ),
    );
    return shards.flat().map((i) => i.entry as CostEntry);
  }
}
