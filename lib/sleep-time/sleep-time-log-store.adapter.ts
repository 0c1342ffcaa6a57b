import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dayGsiPartitions, keys } from '../kernel/memory-paths.js';
import type { SleepTimeRun } from './run-log.js';
import type { SleepTimeLogStore } from './sleep-time-log.port.js';
import { queryAll, queryFirst } from '../kernel/dynamo-query.adapter.js';
import { packJson, unpackJson } from '../kernel/packed-json.adapter.js';
import type { StorageTable } from '../kernel/storage.adapter.js';

/** A run record's run: packed, or the map of an older record. */
const runOf = (item: Record<string, unknown>): SleepTimeRun =>
  (typeof item.packed === 'string' ? unpackJson(item.packed) : item.run) as SleepTimeRun;

/**
 * The sleep-time run log: a DynamoDB record per run (`RUN#{kind}#{startedAt}#{id}`, so a user's
 * runs are a range query by time; the write-sharded by-day GSI partitions `RUNS#{day}#{shard}`
 * list every user's runs of a day: `runsOn`), packed (packed-json.ts; a record written before
 * holds the `run` map); the record is the run's commit record (older runs also have a
 * `RUNID#{id}` item written after it, which nothing reads now). A weekly run's markdown
 * document is rendered from its record when read (`weeklyMarkdown`): it is not
 * an S3 object (`Logs/sleep-time/{runId}.md`, which nothing read).
 */
export class DynamoSleepTimeLogStore implements SleepTimeLogStore {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(storage: StorageTable) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
  }

  /**
   * The run's record by its key, which the job determines (`startedAt` is the job's requested
   * time). No `RUNID#{id}` marker is written beside it: the record is put last,
   * after everything the run does, and the marker was put after the record, so the record
   * alone says the run is logged (every run logged before has its record too). A strongly
   * consistent read, so a redelivery right after the put sees it.
   */
  async exists(run: Pick<SleepTimeRun, 'userId' | 'kind' | 'startedAt' | 'runId'>): Promise<boolean> {
    const res = await this.ddb.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(run.userId), sk: keys.runSk(run.kind, run.startedAt, run.runId) },
        ConsistentRead: true,
        ProjectionExpression: 'pk',
      }),
    );
    return res.Item !== undefined;
  }

  /**
   * The run's record is its DynamoDB item (req R-SLP-7's run log is a table), which holds a
   * weekly run's reflection too. No copy in S3, JSON or markdown: nothing read them, and each
   * was an S3 PUT per run.
   */
  async put(run: SleepTimeRun): Promise<void> {
    const pk = keys.userPk(run.userId);
    await this.ddb.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          pk,
          sk: keys.runSk(run.kind, run.startedAt, run.runId),
          type: 'sleep-time-run',
          gsi1pk: keys.runsDayGsiPk(run.startedAt.slice(0, 10), run.userId),
          gsi1sk: keys.runsDayGsiSk(run.startedAt, run.userId),
          packed: packJson(run),
        },
      }),
    );
  }

  async list(userId: string, kind: SleepTimeRun['kind'], fromIso: string, toIso: string): Promise<SleepTimeRun[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :a AND :b',
      ExpressionAttributeValues: {
        ':pk': keys.userPk(userId),
        ':a': `${keys.runKindPrefix(kind)}${fromIso}`,
        ':b': `${keys.runKindPrefix(kind)}${toIso}#\uffff`,
      },
    });
    return items.map((i) => runOf(i));
  }

  /**
   * The newest `limit` runs of one kind, newest first: a descending Query of the kind's keys
   * (`RUN#{kind}#{startedAt}#…`, so key order is start order) that stops at the page
   * (`queryFirst`), not the user's every run.
   */
  async newest(userId: string, kind: SleepTimeRun['kind'], limit: number): Promise<SleepTimeRun[]> {
    const items = await queryFirst(
      this.ddb,
      {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': keys.runKindPrefix(kind) },
        ScanIndexForward: false,
      },
      limit,
    );
    return items.map((i) => runOf(i));
  }

  /**
   * Every user's runs that started on a UTC day (YYYY-MM-DD), by start time: each shard of
   * the day. For operators and
   * reports; the service itself reads runs per user.
   */
  async runsOn(day: string): Promise<SleepTimeRun[]> {
    const shards = await Promise.all(
      dayGsiPartitions('RUNS', day).map((p) =>
        queryAll(this.ddb, {
          TableName: this.tableName,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :d',
          ExpressionAttributeValues: { ':d': p },
        }),
      ),
    );
    return shards
      .flat()
      .map((i) => runOf(i))
      .sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.userId.localeCompare(b.userId));
  }

  async latest(userId: string, kind: SleepTimeRun['kind']): Promise<SleepTimeRun | null> {
    return (await this.newest(userId, kind, 1))[0] ?? null;
  }
}
