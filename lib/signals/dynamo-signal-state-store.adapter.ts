import { systemClock } from '../kernel/clock.adapter.js';
import type { Clock } from '../kernel/runtime.port.js';
import { isConditionalCheckFailure } from '../kernel/dynamo-errors.adapter.js';
import { batchGetAll, batchWriteAll, queryAll } from '../kernel/dynamo-query.adapter.js';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { packJson, unpackJson } from '../kernel/packed-json.adapter.js';
import { dayGsiPartitions, keys } from '../kernel/memory-paths.js';
import type { SignalState } from './signal-state.js';
import type { ActivityIndex, SignalStateStore, StoredSignalState } from './signal-state.port.js';
import type { StorageTable } from '../kernel/storage.adapter.js';

/**
 * The marker that puts a user in the activity index for a day. It has no TTL: kept like the
 * turns it stands for (~150 bytes per user per active day, beside their turn items of a KB
 * or more). A TTL of a few weeks after the day would bound them in AWS, but DynamoDB Local
 * deletes expired items by the wall clock within seconds, and a local replay's clock runs
 * in the past (LoCoMo's 2023): the markers would vanish before the nightly sweep read them.
 */
export function activityMarker(userId: string, day: string): Record<string, unknown> {
  return {
    pk: keys.userPk(userId),
    sk: keys.activitySk(day),
    kind: 'activity-marker',
    userId,
    day,
    gsi1pk: keys.activityGsiPk(day, userId),
    gsi1sk: keys.activityGsiSk(userId),
  };
}

/**
 * The signal-state item as it is written: no index keys, so writing it never writes gsi1; the
 * state packed (`packed`: its JSON, raw-deflated, in base64). Written once per batch of
 * turns, the item costs a write unit per started KB
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
 * as a map a LoCoMo user's state took 1.3–1.7 KB, two units a turn; packed it takes about
 * half, one unit. A string, not Binary, so the user archive and the state dumps
 * carry it as text.
 */
export function signalStateItem(
  userId: string,
  state: SignalState,
  version: number,
  updatedAt: string,
): Record<string, unknown> {
  return {
    pk: keys.userPk(userId),
    sk: keys.signalSk,
    kind: 'signal-state',
    userId,
    packed: packState(state),
    version,
    updatedAt,
  };
}

export const packState = (state: SignalState): string => packJson(state);

/**
 * The state a signal-state item holds, unvalidated: unpacked, or the map of an item written
 * before the state was packed; a `packed` that does not unpack is returned as it is (the
 * caller's validation treats it as corrupt).
 */
export function storedState(item: Record<string, unknown>): unknown {
  if (typeof item.packed !== 'string') return item.state;
  try {
    return unpackJson(item.packed);
  } catch {
    return item.packed;
  }
}

/**
 * Per-user signal state: one item (`USER#{u}` / `SIGNAL`) written with an optimistic-lock
 * version, once per batch of turns. It carries no GSI keys: DynamoDB writes an index entry
 * whenever a table write adds, changes or removes one, so an indexed state item would write
 * gsi1 on every turn (twice when its day moves), at its full size under an ALL projection
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes).
 *
 * The activity index is instead one small marker item per user per active day (`ACTIVITY#{day}`
 * in the user's partition, write-sharded `ACTIVITY#{day}#{shard}` in gsi1), put when the day
 * first counts a message; the per-day counts stay in the state, which the nightly selection
 * reads for its candidates.
 */
export class DynamoSignalStateStore implements SignalStateStore, ActivityIndex {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(
    storage: StorageTable,
    private readonly clock: Clock = systemClock,
  ) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
  }

  async load(userId: string): Promise<StoredSignalState> {
    const res = await this.ddb.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(userId), sk: keys.signalSk },
        ConsistentRead: true,
      }),
    );
    if (!res.Item) return { raw: undefined, version: null };
    // An item whose version is unusable is corrupt; version 0 lets the reset overwrite it.
    const version = typeof res.Item.version === 'number' ? res.Item.version : 0;
    return { raw: storedState(res.Item), version };
  }

  async save(userId: string, state: SignalState, expectedVersion: number | null): Promise<boolean> {
    const condition =
      expectedVersion === null
        ? 'attribute_not_exists(pk)'
        : expectedVersion === 0
          ? 'attribute_not_exists(#v) OR #v = :v OR NOT attribute_type(#v, :n)'
          : '#v = :v';
    try {
      await this.ddb.send(
        new PutCommand({
          TableName: this.tableName,
          // A put replaces the whole item: once its days are marked, a state written before
          // markers existed loses its old gsi1 keys here, and its entry in the old partition.
          Item: signalStateItem(userId, state, (expectedVersion ?? 0) + 1, this.clock.now().toISOString()),
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
   * The markers of a Lambda batch's new days, every user's in one BatchWriteItem (the signal
   * function already writes the turn index that way), so a user's first turn of a day costs
   * one write request more per batch, not per user. A put is unconditional there: a
   * redelivery rewrites the same marker (one write unit, at worst one index write).
   */
  async markActive(marks: ReadonlyArray<{ userId: string; day: string }>): Promise<void> {
    await batchWriteAll(
      this.ddb,
      this.tableName,
      marks.map((m) => ({ PutRequest: { Item: activityMarker(m.userId, m.day) } })),
    );
  }

  /**
   * Users with a marker on any of these days (every shard of each day), then each one's per-day counts from its
   * state item: one eventually consistent read per candidate, 100 to a BatchGetItem — half a
   * read unit per state item of up to 4 KB (the packed state read whole: a projection saves no units), i.e. $0.0625 per million candidates a sweep at
   * $0.125 per million read units. Sorted by user id, so a sweep's order does not depend on
   * the index's.
   */
  async activeUsers(days: readonly string[]): Promise<Array<{ userId: string; activity: Record<string, number> }>> {
    const partitions = days.flatMap((day) => dayGsiPartitions('ACTIVITY', day));
    const entries = await Promise.all(
      partitions.map((p) =>
        queryAll(this.ddb, {
          TableName: this.tableName,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :p',
          ExpressionAttributeValues: { ':p': p },
          ProjectionExpression: 'userId',
        }),
      ),
    );
    const userIds = [...new Set(entries.flat().map((e) => String(e.userId)))].sort();
    const states = await batchGetAll(
      this.ddb,
      this.tableName,
      userIds.map((u) => ({ pk: keys.userPk(u), sk: keys.signalSk })),
      { projection: 'userId, packed, #s.activity', names: { '#s': 'state' } },
    );
    const activity = new Map(
      states.map((s) => [
        String(s.userId),
        (storedState(s) as { activity?: Record<string, number> } | undefined)?.activity ?? {},
      ]),
    );
    return userIds.map((userId) => ({ userId, activity: activity.get(userId) ?? {} }));
  }
}
