import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { CostEntry } from './daily-cost.js';
import { dayGsiPartitions, keys } from '../kernel/memory-paths.js';
import type { CostLedger } from './cost-ledger.port.js';
import { queryAll } from '../kernel/dynamo-query.adapter.js';
import { putOnce } from '../kernel/dynamo-put-once.adapter.js';
import type { StorageTable } from '../kernel/storage.adapter.js';

/**
 * The cost ledger: an item per job in the user's partition (`COST#{day}#{jobId}`, so a user's
 * days are one range query). The stage's total of a day reads the write-sharded by-day
 * partitions of gsi1 (`COSTDAY#{day}#{shard}`) for the users who had a cost that day, then
 * each user's entries of the day. Only a user's first entry of a day carries the gsi1 keys:
 * gsi1 projects ALL, so every entry with them was written twice, the index's copy
 * billed as a table write
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes).
 * Written once (a conditional put: a redelivered job leaves the first entry). Entries are kept
 * (≈ 400 bytes a job); no TTL, as a TTL counted from the job's day deletes at once what a
 * replay of old conversations records (DynamoDB deletes items whose TTL has passed by the
 * wall clock).
 */
export class DynamoCostLedger implements CostLedger {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(storage: StorageTable) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
  }

  /**
   * The entry, with gsi1 keys when the user has no entry of that day yet. The invariant the
   * stage's total needs — each (user, day) with entries has one in gsi1 — holds under any
   * interleaving: entries are only ever added (a forget deletes them all), and the entry
   * committed first had read none before it (nothing was committed before it), so it
   * carries the keys. The read may be eventually consistent: reads are read-committed, so a
   * stale one can only miss an entry (another indexed entry: harmless, the reader counts users
   * once), never show one that is not there
   * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
   * It costs half a read unit; the copy it spares, a write unit.
   */
  async record(entry: CostEntry): Promise<void> {
    const pk = keys.userPk(entry.userId);
    const earlier = await this.ddb.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :d)',
        ExpressionAttributeValues: { ':pk': pk, ':d': `${keys.costPrefix}${entry.day}#` },
        ProjectionExpression: 'sk',
        Limit: 1,
      }),
    );
    const first = (earlier.Items ?? []).length === 0;
    await putOnce(this.ddb, this.tableName, {
      pk,
      sk: keys.costSk(entry.day, entry.jobId),
      type: 'cost',
      ...(first
        ? { gsi1pk: keys.costDayGsiPk(entry.day, entry.userId), gsi1sk: keys.costDayGsiSk(entry.userId, entry.jobId) }
        : {}),
      entry,
    });
  }

  async forUser(userId: string, fromDay: string, toDay: string): Promise<CostEntry[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :a AND :b',
      ExpressionAttributeValues: {
        ':pk': keys.userPk(userId),
        ':a': `${keys.costPrefix}${fromDay}`,
        ':b': `${keys.costPrefix}${toDay}#\uffff`,
      },
    });
    return items.map((i) => i.entry as CostEntry);
  }

  /** The users gsi1 lists for the day (each shard), then each one's entries of the day, a few users at a time. */
  async forDay(day: string): Promise<CostEntry[]> {
    const shards = await Promise.all(
      dayGsiPartitions('COSTDAY', day).map((p) =>
        queryAll(this.ddb, {
          TableName: this.tableName,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :d',
          ExpressionAttributeValues: { ':d': p },
        }),
      ),
    );
    const users = [...new Set(shards.flat().map((i) => (i.entry as CostEntry).userId))];
    const out: CostEntry[] = [];
    for (let i = 0; i < users.length; i += USERS_AT_ONCE) {
      for (const entries of await Promise.all(users.slice(i, i + USERS_AT_ONCE).map((u) => this.forUser(u, day, day))))
        out.push(...entries);
    }
    return out;
  }
}

/** Users whose day forDay reads in parallel. */
const USERS_AT_ONCE = 16;
