import { type DynamoDBDocumentClient, GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type DiaryOverride, type DiaryRecord, diaryVisible } from './diary.js';
import { keys } from '../kernel/memory-paths.js';
import type { DiaryStore } from './diary.port.js';
import { isCancelledByCondition } from '../kernel/dynamo-errors.adapter.js';
import { auditRow, requestToken } from '../items/memory-item-store.adapter.js';
import type { AuditEntry } from '../tiers/memory-tiers.js';
import { putOnce } from '../kernel/dynamo-put-once.adapter.js';
import { batchGetAll } from '../kernel/dynamo-query.adapter.js';
import type { Storage, SearchChangeLog } from '../kernel/storage.adapter.js';

/** Items a page reads at most while it looks for entries of one type (a filter reads past the others). */
const MAX_SCANNED_PER_PAGE = 500;
/** The batch id at the end of a diary sort key (`DIARY#{lastTurn}#{batchId}`). */
const batchIdOfSk = (sk: unknown): string | undefined =>
  typeof sk === 'string' ? sk.split('#').slice(2).join('#') || undefined : undefined;

/** Items each Query of a one-type page reads. */
const FILTERED_STEP = 100;

/**
 * Diary entries as `DIARY#{lastTurn}#{batchId}` items in the user's partition (keys.diarySk):
 * a page is a Query newest first, an entry by id a BatchGetItem. Each write marks the entry
 * changed for the search index (content type `diary`).
 */
export class DynamoDiaryStore implements DiaryStore {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly changes: SearchChangeLog;

  constructor(storage: Pick<Storage, 'ddb' | 'tableName' | 'changes'>) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
    this.changes = storage.changes;
  }

  async put(record: DiaryRecord): Promise<void> {
    await putOnce(this.ddb, this.tableName, {
      pk: keys.userPk(record.userId),
      sk: keys.diarySk(record.id),
      type: 'diary',
      entry: record,
    });
    // Marked on a repeat too: the first attempt may have died between its write and its mark.
    // A rejected attempt is not searched, so the index need not hear of it until a person keeps it.
    if (diaryVisible(record)) await this.changes.mark(record.userId, [`diary:${record.id}`]);
  }

  /**
   * A Query's Limit counts the items it reads before its FilterExpression drops any
   * ("the maximum number of items to evaluate (not necessarily the number of matching items)":
   * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Query.html),
   * so a page of one type reads in steps of FILTERED_STEP items, not of the few it still needs.
   */
  async page(
    userId: string,
    options: { limit: number; after?: string | undefined; type?: DiaryRecord['type'] | undefined },
  ): Promise<{ entries: DiaryRecord[]; next?: string }> {
    const entries: DiaryRecord[] = [];
    let start: Record<string, unknown> | undefined =
      options.after === undefined ? undefined : { pk: keys.userPk(userId), sk: keys.diarySk(options.after) };
    let scanned = 0;
    while (entries.length <= options.limit && scanned < MAX_SCANNED_PER_PAGE) {
      const res = await this.ddb.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
          ExpressionAttributeValues: {
            ':pk': keys.userPk(userId),
            ':p': keys.diaryPrefix,
            ...(options.type ? { ':t': options.type } : {}),
          },
          ...(options.type
            ? { FilterExpression: '#e.#t = :t', ExpressionAttributeNames: { '#e': 'entry', '#t': 'type' } }
            : {}),
          ScanIndexForward: false,
          // One more than the page, to know whether another follows.
          Limit: options.type ? FILTERED_STEP : options.limit + 1 - entries.length,
          ExclusiveStartKey: start,
        }),
      );
      entries.push(...(res.Items ?? []).map((i) => i.entry as DiaryRecord));
      scanned += res.ScannedCount ?? 0;
      start = res.LastEvaluatedKey;
      if (!start) break;
    }
    const page = entries.slice(0, options.limit);
    // More follow when this read found more than the page, or stopped before the partition's end
    // (then, with nothing of the type found, the page ends where the read stopped).
    const next = entries.length > page.length || start ? (page.at(-1)?.id ?? batchIdOfSk(start?.sk)) : undefined;
    return { entries: page, ...(next ? { next } : {}) };
  }

  async byIds(userId: string, ids: readonly string[]): Promise<DiaryRecord[]> {
    const items = await batchGetAll(
      this.ddb,
      this.tableName,
      [...new Set(ids)].map((id) => ({ pk: keys.userPk(userId), sk: keys.diarySk(id) })),
      { consistent: true },
    );
    return items.map((i) => i.entry as DiaryRecord);
  }

  /**
   * The override, its audit entry and the entry's search change mark in one TransactWriteItems
   * (a keep or drop is never without its audit entry); then the entry as it now is.
   */
  async override(userId: string, id: string, override: DiaryOverride, audit: AuditEntry): Promise<DiaryRecord | null> {
    const key = { pk: keys.userPk(userId), sk: keys.diarySk(id) };
    try {
      await this.ddb.send(
        new TransactWriteCommand({
          ClientRequestToken: requestToken([userId, id, override.decision, override.at]),
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: key,
                UpdateExpression: 'SET #e.#o = :o',
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeNames: { '#e': 'entry', '#o': 'override' },
                ExpressionAttributeValues: { ':o': override },
              },
            },
            { Put: { TableName: this.tableName, Item: auditRow(audit) } },
            ...this.changes.transactPuts(userId, [`diary:${id}`]),
          ],
        }),
      );
    } catch (error) {
      if (isCancelledByCondition(error)) return null;
      throw error;
    }
    const res = await this.ddb.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
    return (res.Item?.entry as DiaryRecord | undefined) ?? null;
  }
}
