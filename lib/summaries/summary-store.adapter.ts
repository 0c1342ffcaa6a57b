import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { parseFrontMatter, renderFrontMatter } from '../kernel/front-matter.js';
import { keys } from '../kernel/memory-paths.js';
import type { SummaryRecordView, SummaryEdit } from '../items/source-items.js';
import { type SummaryPair, type SummaryRecord, summaryDocument } from './summary.js';
import type { SummaryStore } from './summary.port.js';
import { isConditionalCheckFailure } from '../kernel/dynamo-errors.adapter.js';
import { putOnce } from '../kernel/dynamo-put-once.adapter.js';
import { batchGetAll, queryAll, queryFirst } from '../kernel/dynamo-query.adapter.js';
import { getText } from '../kernel/s3-objects.adapter.js';
import type { Storage, SearchChangeLog } from '../kernel/storage.adapter.js';

/**
 * Summary turn pairs: one record in DynamoDB (`keys.summarySk`: `SUMMARY#{last turn}#{id}`) holding both turns and every
 * field of the pair's markdown document (lib/summaries/summary.ts `summaryDocument`), which is
 * rendered from it when read (the list serves it as `markdown`). The document
 * is not an S3 object: the record already held all it says, nothing read it, and an S3
 * PUT costs as much as 8 write units (https://aws.amazon.com/s3/pricing/,
 * https://aws.amazon.com/dynamodb/pricing/on-demand/). Pairs written before have their
 * documents in S3, named by the record (`documentKey`; before that `systemKey` and
 * `assistantKey`): an edit or a deletion rewrites those in place.
 */
export class DynamoS3SummaryStore implements SummaryStore {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly s3: S3Client;
  private readonly tableName: string;
  private readonly bucketName: string;
  /** Marks the summaries written or deleted as changed for the search index. */
  private readonly changes: SearchChangeLog;

  constructor(storage: Storage) {
    this.ddb = storage.ddb;
    this.s3 = storage.s3;
    this.tableName = storage.tableName;
    this.bucketName = storage.bucketName;
    this.changes = storage.changes;
  }

  async exists(userId: string, id: string): Promise<boolean> {
    const res = await this.ddb.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(userId), sk: keys.summarySk(id) },
        ConsistentRead: true,
        ProjectionExpression: 'pk',
      }),
    );
    return res.Item !== undefined;
  }

  async write(pair: SummaryPair): Promise<void> {
    const { document: _rendered, ...record } = pair;
    await putOnce(this.ddb, this.tableName, {
      pk: keys.userPk(pair.userId),
      sk: keys.summarySk(pair.id),
      type: 'summary',
      ...record,
    });
    await this.changes.mark(pair.userId, [`summary:${pair.id}`]);
  }

  async list(userId: string): Promise<SummaryRecordView[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': keys.summaryPrefix },
    });
    return items
      .map((i) => toView(userId, i))
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
  }

  /**
   * A descending Query of the key range (`keys.turnKeyed`: last turn, then id; summaries still
   * under the old keys are moved by the migration) that stops at the page (`queryFirst`).
   * Deleted ones are dropped by a FilterExpression, which DynamoDB applies after `Limit`, so
   * the read goes on until the page is full or the range ends; they are read and billed all
   * the same (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.FilterExpression.html).
   */
  async newest(userId: string, options: { limit: number; includeDeleted: boolean }): Promise<SummaryRecordView[]> {
    const { low, high } = keys.turnKeyed(keys.summaryPrefix);
    const items = await queryFirst(
      this.ddb,
      {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
        ExpressionAttributeValues: {
          ':pk': keys.userPk(userId),
          ':low': low,
          ':high': high,
          ...(options.includeDeleted ? {} : { ':t': true }),
        },
        ...(options.includeDeleted ? {} : { FilterExpression: 'attribute_not_exists(deleted) OR deleted <> :t' }),
        ScanIndexForward: false,
      },
      options.limit,
    );
    return items.map((i) => toView(userId, i));
  }

  /** These summaries by id (a BatchGetItem per 100, consistent). */
  async byIds(userId: string, ids: readonly string[]): Promise<SummaryRecordView[]> {
    const items = await batchGetAll(
      this.ddb,
      this.tableName,
      [...new Set(ids)].map((id) => ({ pk: keys.userPk(userId), sk: keys.summarySk(id) })),
      { consistent: true },
    );
    return items.map((i) => toView(userId, i));
  }

  /**
   * One UpdateItem per summary: ADD is atomic, so concurrent searches lose no count
   * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html#Expressions.UpdateExpressions.ADD).
   * The condition keeps a live summary's count apart from a deleted one's, and creates nothing.
   */
  async countResurrections(userId: string, ids: readonly string[]): Promise<void> {
    await Promise.all(
      [...new Set(ids)].map(async (id) => {
        const key = { pk: keys.userPk(userId), sk: keys.summarySk(id) };
        const add = (counter: string, condition: string) =>
          this.ddb.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: key,
              UpdateExpression: `ADD ${counter} :one`,
              ConditionExpression: condition,
              ExpressionAttributeValues: { ':one': 1, ':t': true },
            }),
          );
        try {
          await add('resurrections', 'attribute_exists(pk) AND (attribute_not_exists(deleted) OR deleted <> :t)');
        } catch (error) {
          if (!isConditionalCheckFailure(error)) throw error;
          try {
            await add('resurrectionsWhileDeleted', 'attribute_exists(pk) AND deleted = :t');
          } catch (again) {
            if (!isConditionalCheckFailure(again)) throw again;
          }
        }
      }),
    );
  }

  /**
   * A person's edit: the record's text replaced and the old text appended to its `edits`, in
   * one conditional UpdateItem (a deleted or missing summary is refused); then the assistant
   * document is rewritten from the record. Null when there is no live summary by that id.
   */
  async edit(
    userId: string,
    id: string,
    edit: { text: string; by: string; at: string; reason?: string | undefined },
  ): Promise<SummaryRecordView | null> {
    const key = { pk: keys.userPk(userId), sk: keys.summarySk(id) };
    const current = await this.ddb.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
    if (!current.Item || current.Item.deleted === true) return null;
    const entry = {
      at: edit.at,
      by: edit.by,
      previous: String(current.Item.text ?? ''),
      ...(edit.reason ? { reason: edit.reason } : {}),
    };
    let item: Record<string, unknown> | undefined;
    try {
      const res = await this.ddb.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: 'SET #text = :text, edits = list_append(if_not_exists(edits, :none), :edit)',
          // The text this edit replaces is the one it read: a concurrent edit makes this one fail, not vanish.
          ConditionExpression: 'attribute_exists(pk) AND deleted <> :t AND #text = :previous',
          ExpressionAttributeNames: { '#text': 'text' },
          ExpressionAttributeValues: {
            ':text': edit.text,
            ':none': [],
            ':edit': [entry],
            ':t': true,
            ':previous': entry.previous,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      item = res.Attributes;
    } catch (error) {
      if (isConditionalCheckFailure(error)) return null;
      throw error;
    }
    const edits = (item?.edits as unknown[] | undefined)?.length ?? 0;
    if (typeof item?.documentKey === 'string')
      await this.putDocument(item.documentKey, summaryDocument(recordOf(userId, item, edits)));
    else if (typeof item?.assistantKey === 'string')
      await this.rewriteDocument(item.assistantKey, (meta) => ({ meta: { ...meta, edited: edits }, body: edit.text }));
    await this.changes.mark(userId, [`summary:${id}`]);
    return toView(userId, item ?? {});
  }

  async softDelete(userId: string, id: string): Promise<boolean> {
    let item: Record<string, unknown> | undefined;
    try {
      const res = await this.ddb.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keys.userPk(userId), sk: keys.summarySk(id) },
          UpdateExpression: 'SET deleted = :t',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':t': true },
          ReturnValues: 'ALL_NEW',
        }),
      );
      item = res.Attributes;
    } catch (error) {
      if (isConditionalCheckFailure(error)) return false;
      throw error;
    }
    await this.changes.mark(userId, [`summary:${id}`]);
    if (typeof item?.documentKey === 'string')
      await this.putDocument(
        item.documentKey,
        summaryDocument(recordOf(userId, item, (item.edits as unknown[] | undefined)?.length ?? 0)),
      );
    for (const key of [item?.systemKey, item?.assistantKey]) {
      if (typeof key === 'string')
        await this.rewriteDocument(key, (meta, body) => ({ meta: { ...meta, deleted: true }, body }));
    }
    return true;
  }

  private async putDocument(key: string, markdown: string): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucketName,
        Key: key,
        Body: markdown,
        ContentType: 'text/markdown; charset=utf-8',
      }),
    );
  }

  /** One document of an older pair (stored in S3) read, changed (front matter and body) and written back whole. */
  private async rewriteDocument(
    key: string,
    change: (meta: Record<string, unknown>, body: string) => { meta: Record<string, unknown>; body: string },
  ): Promise<void> {
    const { meta, body } = parseFrontMatter(await getText(this.s3, this.bucketName, key));
    const next = change(meta, body);
    await this.putDocument(key, renderFrontMatter(next.meta, next.body));
  }
}

/** The document's fields from the record as stored. */
const recordOf = (userId: string, i: Record<string, unknown>, edited: number): SummaryRecord => ({
  userId,
  id: String(i.id),
  kind: String(i.kind ?? ''),
  trigger: String(i.trigger ?? ''),
  createdAt: String(i.createdAt ?? ''),
  sourceTurns: (i.sourceTurns as number[] | undefined) ?? [],
  ...(typeof i.carried === 'string' ? { carried: i.carried } : {}),
  prompt: String(i.prompt ?? ''),
  text: String(i.text ?? ''),
  modelId: String(i.modelId ?? ''),
  inputTokens: Number(i.inputTokens ?? 0),
  outputTokens: Number(i.outputTokens ?? 0),
  deleted: i.deleted === true,
  edited,
});

const toView = (userId: string, i: Record<string, unknown>): SummaryRecordView => ({
  ...(i.prompt !== undefined
    ? { markdown: summaryDocument(recordOf(userId, i, (i.edits as unknown[] | undefined)?.length ?? 0)) }
    : {}),
  userId,
  id: String(i.id),
  kind: String(i.kind ?? ''),
  createdAt: String(i.createdAt ?? ''),
  sourceTurns: (i.sourceTurns as number[] | undefined) ?? [],
  text: String(i.text ?? ''),
  deleted: i.deleted === true,
  ...(typeof i.sessionId === 'string' ? { sessionId: i.sessionId } : {}),
  ...(typeof i.carried === 'string' ? { carried: i.carried } : {}),
  prompt: String(i.prompt ?? ''),
  ...(Array.isArray(i.edits) && i.edits.length > 0 ? { edits: i.edits as SummaryEdit[] } : {}),
  resurrections: typeof i.resurrections === 'number' ? i.resurrections : 0,
  resurrectionsWhileDeleted: typeof i.resurrectionsWhileDeleted === 'number' ? i.resurrectionsWhileDeleted : 0,
});
