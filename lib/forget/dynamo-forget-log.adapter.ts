/**
 * The receipts of users' erasures: `FORGET#{u}` / `RECEIPT#{requestedAt}`, outside
 * the user's partition so the erasure never deletes its own record. A receipt holds counts and
 * times, never content. The signal function reads it only for a user with no signal state
 * (a new user, or one just forgotten); the reflector reads it before each job.
 */
import { type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../kernel/memory-paths.js';
import type { ForgetCounts, ForgetLog, ForgetReceipt } from './forget.port.js';
import { putOnce } from '../kernel/dynamo-put-once.adapter.js';
import type { StorageTable } from '../kernel/storage.adapter.js';

const COUNTS: ReadonlyArray<keyof ForgetCounts> = ['items', 'objects', 'globalItems', 'globalIndexObjects'];

export class DynamoForgetLog implements ForgetLog {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(storage: StorageTable) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
  }

  async latest(userId: string): Promise<ForgetReceipt | null> {
    const res = await this.ddb.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': keys.forgetPk(userId), ':p': keys.forgetPrefix },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const item = res.Items?.[0];
    if (!item) return null;
    return {
      userId,
      requestedAt: String(item.requestedAt),
      requestedBy: String(item.requestedBy),
      status: item.status === 'done' ? 'done' : 'pending',
      ...(item.completedAt ? { completedAt: String(item.completedAt) } : {}),
      counts: Object.fromEntries(
        COUNTS.map((c) => [c, Number((item.counts as Record<string, unknown> | undefined)?.[c] ?? 0)]),
      ) as unknown as ForgetCounts,
    };
  }

  async request(receipt: ForgetReceipt): Promise<void> {
    await putOnce(this.ddb, this.tableName, {
      pk: keys.forgetPk(receipt.userId),
      sk: keys.forgetSk(receipt.requestedAt),
      type: 'forget-receipt',
      ...receipt,
    });
  }

  async add(userId: string, requestedAt: string, counts: Partial<ForgetCounts>): Promise<void> {
    const fields = COUNTS.filter((c) => (counts[c] ?? 0) > 0);
    if (fields.length === 0) return;
    await this.ddb.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.forgetPk(userId), sk: keys.forgetSk(requestedAt) },
        UpdateExpression: `ADD ${fields.map((c) => `#counts.#${c} :${c}`).join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#counts': 'counts', ...Object.fromEntries(fields.map((c) => [`#${c}`, c])) },
        ExpressionAttributeValues: Object.fromEntries(fields.map((c) => [`:${c}`, counts[c]])),
      }),
    );
  }

  async complete(userId: string, requestedAt: string, completedAt: string): Promise<void> {
    await this.ddb.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.forgetPk(userId), sk: keys.forgetSk(requestedAt) },
        UpdateExpression: 'SET #status = :done, completedAt = if_not_exists(completedAt, :at)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':done': 'done', ':at': completedAt },
      }),
    );
  }
}
