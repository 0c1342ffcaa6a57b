import { systemClock } from './clock.js';
import type { Clock } from '../ports.js';
import { isConditionalCheckFailure } from './dynamo-errors.js';
import { queryAll } from './dynamo-query.js';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../domain/memory-paths.js';
import { lastActiveDay, type SignalState } from '../domain/signal-accumulator.js';
import type { SignalStateStore, StoredSignalState } from '../ports.js';

/**
 * Per-user signal state: one item (`USER#{u}` / `SIGNAL`) written with an optimistic-lock
 * version. It doubles as the activity index: its GSI keys put it in the partition of the
 * user's last active day, and `state.activity` holds messages per day, so the nightly
 * selection queries a few day partitions instead of scanning — at no extra write.
 */
export class DynamoSignalStateStore implements SignalStateStore {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly clock: Clock = systemClock,
  ) {}

  async load(userId: string): Promise<StoredSignalState> {
    const res = await this.ddb.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: keys.userPk(userId), sk: keys.signalSk }, ConsistentRead: true }),
    );
    if (!res.Item) return { raw: undefined, version: null };
    // An item whose version is unusable is corrupt; version 0 lets the reset overwrite it.
    const version = typeof res.Item.version === 'number' ? res.Item.version : 0;
    return { raw: res.Item.state, version };
  }

  async save(userId: string, state: SignalState, expectedVersion: number | null): Promise<boolean> {
    const condition =
      expectedVersion === null
        ? 'attribute_not_exists(pk)'
        : expectedVersion === 0
          ? 'attribute_not_exists(#v) OR #v = :v OR NOT attribute_type(#v, :n)'
          : '#v = :v';
    const day = lastActiveDay(state);
    try {
      await this.ddb.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk: keys.userPk(userId),
            sk: keys.signalSk,
            kind: 'signal-state',
            userId,
            state,
            version: (expectedVersion ?? 0) + 1,
            ...(day ? { gsi1pk: keys.activityGsiPk(day), gsi1sk: keys.activityGsiSk(userId) } : {}),
            updatedAt: this.clock.now().toISOString(),
          },
          ConditionExpression: condition,
          ...(expectedVersion === null
            ? {}
            : {
                ExpressionAttributeNames: { '#v': 'version' },
                ExpressionAttributeValues: expectedVersion === 0 ? { ':v': 0, ':n': 'N' } : { ':v': expectedVersion },
              }),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailure(error)) return false;
      throw error;
    }
  }

  /**
   * The activity index: users whose last message fell on `day` (UTC, YYYY-MM-DD), with
   * their per-day message counts. A look-back window is a query per day in it — no scan.
   */
  async activeUsers(day: string): Promise<Array<{ userId: string; activity: Record<string, number> }>> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :d',
      ExpressionAttributeValues: { ':d': keys.activityGsiPk(day) },
      ProjectionExpression: 'userId, #s.activity',
      ExpressionAttributeNames: { '#s': 'state' },
    });
    return items.map((item) => ({ userId: String(item.userId), activity: (item.state as { activity?: Record<string, number> } | undefined)?.activity ?? {} }));
  }
}
