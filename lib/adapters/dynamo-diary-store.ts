import { type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type DiaryOverride, type DiaryRecord, diaryVisible } from '../domain/diary.js';
import { keys } from '../domain/memory-paths.js';
import type { DiaryStore } from '../ports.js';
import { isConditionalCheckFailure } from './dynamo-errors.js';
import { putOnce } from './dynamo-put-once.js';
import { batchGetAll } from './dynamo-query.js';
import type { DynamoSearchChangeLog } from './search-index-store.js';

/** Items a page reads at most while it looks for entries of one type (a filter reads past the others). */
const MAX_SCANNED_PER_PAGE = 500;

/**
 * Diary entries as `DIARY#{lastTurn}#{batchId}` items in the user's partition (keys.diarySk):
 * a page is a Query newest first, an entry by id a BatchGetItem. Each write marks the entry
 * changed for the search index (content type `diary`).
 */
export class DynamoDiaryStore implements DiaryStore {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly changes: DynamoSearchChangeLog,
  ) {}

  async put(record: DiaryRecord): Promise<void> {
    await putOnce(this.ddb, this.tableName, { pk: keys.userPk(record.userId), sk: keys.diarySk(record.id), type: 'diary', entry: record });
    // Marked on a repeat too: the first attempt may have died between its write and its mark.
    // A rejected attempt is not searched, so the index need not hear of it until a person keeps it.
    if (diaryVisible(record)) await this.changes.mark(record.userId, [`diary:${record.id}`]);
  }

  async page(userId: string, options: { limit: number; after?: string | undefined; type?: DiaryRecord['type'] | undefined }): Promise<{ entries: DiaryRecord[]; next?: string }> {
    const entries: DiaryRecord[] = [];
    let start: Record<string, unknown> | undefined = options.after === undefined ? undefined : { pk: keys.userPk(userId), sk: keys.diarySk(options.after) };
    let scanned = 0;
    while (entries.length < options.limit && scanned < MAX_SCANNED_PER_PAGE) {
      const res = await this.ddb.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
          ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': keys.diaryPrefix, ...(options.type ? { ':t': options.type } : {}) },
          ...(options.type ? { FilterExpression: '#e.#t = :t', ExpressionAttributeNames: { '#e': 'entry', '#t': 'type' } } : {}),
          ScanIndexForward: false,
          Limit: options.limit - entries.length,
          ExclusiveStartKey: start,
        }),
      );
      entries.push(...(res.Items ?? []).map((i) => i.entry as DiaryRecord));
      scanned += res.ScannedCount ?? 0;
      start = res.LastEvaluatedKey;
      if (!start) break;
    }
    const last = entries.at(-1);
    return { entries, ...(start && last ? { next: last.id } : {}) };
  }

  async byIds(userId: string, ids: readonly string[]): Promise<DiaryRecord[]> {
    const items = await batchGetAll(this.ddb, this.tableName, [...new Set(ids)].map((id) => ({ pk: keys.userPk(userId), sk: keys.diarySk(id) })), { consistent: true });
    return items.map((i) => i.entry as DiaryRecord);
  }

  async override(userId: string, id: string, override: DiaryOverride): Promise<DiaryRecord | null> {
    try {
      const res = await this.ddb.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keys.userPk(userId), sk: keys.diarySk(id) },
          UpdateExpression: 'SET #e.#o = :o',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#e': 'entry', '#o': 'override' },
          ExpressionAttributeValues: { ':o': override },
          ReturnValues: 'ALL_NEW',
        }),
      );
      await this.changes.mark(userId, [`diary:${id}`]);
      return (res.Attributes?.entry as DiaryRecord | undefined) ?? null;
    } catch (error) {
      if (isConditionalCheckFailure(error)) return null;
      throw error;
    }
  }
}
