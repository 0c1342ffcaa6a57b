import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { KnowledgeDoc } from './knowledge.js';
import {
  dayGsiPartitions,
  episodeKey,
  eventEpisodeKey,
  keys,
  knowledgePrefix,
  stagingPrefix,
} from '../kernel/memory-paths.js';
import { PROMOTIONS_TO_KNOWLEDGE, restagedMarkdown, type StagedRecord } from './promotion.js';
import type { StagedDocument } from './staging.js';
import type { KnowledgeEntry, KnowledgeIndexChange, KnowledgeStore } from './knowledge.port.js';
import type { ModelResponse } from '../model/language-model.port.js';
import { isConditionalCheckFailure } from '../kernel/dynamo-errors.adapter.js';
import { putOnce } from '../kernel/dynamo-put-once.adapter.js';
import { DynamoS3KnowledgeIndex } from './knowledge-index.adapter.js';
import { DynamoS3ModelOutputStore } from '../model/model-output-store.adapter.js';
import { slimStaged, toRecord } from './staged-row.js';
import { batchGetAll, queryAll } from '../kernel/dynamo-query.adapter.js';
import { getTextOrNull } from '../kernel/s3-objects.adapter.js';
import type { Storage, SearchChangeLog } from '../kernel/storage.adapter.js';

/**
 * Staging and Knowledge. A staged document is its DynamoDB record (`STAGED#{path}`: front
 * matter `meta` and markdown `body`; promotion counts are conditional updates, once per
 * batch) and, while it is undecided (status `staged`), its markdown with YAML front matter at
 * `users/{u}/Knowledge_staging/{path}` (DESIGN.md, "State"; req R-STG): the record rendered
 * (`restagedMarkdown`), so the object is always a function of the record and a rewrite of it
 * is idempotent. The record is the truth (search, the review list and the sweeps read it);
 * the object is its copy that a person, an export or a sync tool reads.
 *
 * Order, so a crash between the two writes leaves only what a retry repairs: the object is
 * written AFTER the record it renders (putStaged, reinforce) and removed BEFORE the record
 * leaves the staged state (settlePromoted, recordReview's discard, deleteStaged). The one
 * state a crash can leave is "record staged, object missing or one promotion behind", and
 * every retry writes or removes it again: a redelivered batch puts the same record (putOnce
 * keeps it) and rewrites the object from it; a redelivered reinforcement finds its batch
 * counted and rewrites the object; a promotion, discard or expiry retried deletes again (an
 * S3 DELETE of a missing key succeeds: https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html).
 * The reverse (an object whose record is gone or decided) is left only by a reinforcement's
 * rewrite racing a reviewer's decision of the same record within the PUT's latency
 * (docs/data-model.md, "Staged documents in S3").
 *
 * Cost: a PUT when staged and per reinforcement that does not promote (an S3 PUT is
 * $0.005 per 1,000, a DELETE free: https://aws.amazon.com/s3/pricing/); the reinforcement that
 * reaches PROMOTIONS_TO_KNOWLEDGE skips the rewrite, as promotion removes the object next.
 * Promoted documents are markdown under Knowledge/ plus an entry in the user's knowledge index
 * (knowledge-index.ts: versioned, written conditionally, since the reflector and the API
 * write it at once).
 */

export class DynamoS3KnowledgeStore implements KnowledgeStore {
  private readonly index: DynamoS3KnowledgeIndex;
  private readonly outputs: DynamoS3ModelOutputStore;
  private readonly ddb: DynamoDBDocumentClient;
  private readonly s3: S3Client;
  private readonly tableName: string;
  private readonly bucketName: string;
  /** Marks staged records and Knowledge documents written as changed for the search index. */
  private readonly changes: SearchChangeLog;

  constructor(storage: Storage) {
    this.ddb = storage.ddb;
    this.s3 = storage.s3;
    this.tableName = storage.tableName;
    this.bucketName = storage.bucketName;
    this.changes = storage.changes;
    this.index = new DynamoS3KnowledgeIndex(storage);
    this.outputs = new DynamoS3ModelOutputStore(storage);
  }

  async loadKnowledge(userId: string): Promise<KnowledgeDoc[]> {
    return [...(await this.index.load(userId))];
  }

  updateKnowledgeIndex<R>(
    userId: string,
    change: (docs: readonly KnowledgeDoc[]) => KnowledgeIndexChange<R>,
  ): Promise<R> {
    return this.index.update(userId, change);
  }

  async listStaged(userId: string): Promise<StagedRecord[]> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': keys.stagedPrefix },
      ConsistentRead: true,
    });
    return items.map(toRecord);
  }

  /**
   * A page of staged records: one Query with `Limit` (DynamoDB applies it before the filter,
   * so the read is bounded by the page whatever the history:
   * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.FilterExpression.html).
   */
  async stagedPage(
    userId: string,
    page: { limit: number; after?: string | undefined; undecidedOnly: boolean },
  ): Promise<{ records: StagedRecord[]; next?: string }> {
    const pk = keys.userPk(userId);
    const res = await this.ddb.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ...(page.undecidedOnly
          ? { FilterExpression: '#s = :staged', ExpressionAttributeNames: { '#s': 'status' } }
          : {}),
        ExpressionAttributeValues: {
          ':pk': pk,
          ':p': keys.stagedPrefix,
          ...(page.undecidedOnly ? { ':staged': 'staged' } : {}),
        },
        ...(page.after !== undefined ? { ExclusiveStartKey: { pk, sk: keys.stagedSk(page.after) } } : {}),
        Limit: page.limit,
        ConsistentRead: true,
      }),
    );
    const last = res.LastEvaluatedKey?.sk;
    return {
      records: (res.Items ?? []).map(toRecord),
      ...(typeof last === 'string' ? { next: last.slice(keys.stagedPrefix.length) } : {}),
    };
  }

  /** These staged records by path (a BatchGetItem per 100), consistent like listStaged. */
  async stagedRecords(userId: string, paths: readonly string[]): Promise<StagedRecord[]> {
    const items = await batchGetAll(
      this.ddb,
      this.tableName,
      [...new Set(paths)].map((p) => ({ pk: keys.userPk(userId), sk: keys.stagedSk(p) })),
      { consistent: true },
    );
    return items.map(toRecord);
  }

  async putStaged(userId: string, docs: readonly StagedDocument[], batchId: string): Promise<string[]> {
    await Promise.all(
      docs.map(async (d) => {
        const record: StagedRecord = {
          path: d.path,
          kind: d.kind,
          title: d.title,
          category: d.category,
          text: d.text,
          confidence: d.confidence,
          sourceTurns: d.sourceTurns,
          batchId,
          stagedAt: String(d.meta.staged_at ?? ''),
          meta: d.meta,
          body: d.body,
          promotedBy: [],
          status: 'staged',
        };
        const fresh = await putOnce(this.ddb, this.tableName, {
          pk: keys.userPk(userId),
          sk: keys.stagedSk(d.path),
          type: 'staged',
          userId,
          ...slimStaged(record),
          // Staged-by-day index (write-sharded) for the expiry sweep; removed on promotion and discard.
          gsi1pk: keys.stagedDayGsiPk(record.stagedAt.slice(0, 10), userId),
          gsi1sk: keys.stagedDayGsiSk(userId, d.path),
        });
        // A redelivery finds the record written: its object is rendered from the record as it is now.
        await this.putStagedFile(userId, fresh ? record : await this.stagedRecord(userId, d.path));
      }),
    );
    await this.changes.mark(
      userId,
      docs.map((d) => `staged:${d.path}`),
    );
    return docs.map((d) => `Knowledge_staging/${d.path}`);
  }

  async reinforce(userId: string, path: string, batchId: string): Promise<StagedRecord> {
    const key = { pk: keys.userPk(userId), sk: keys.stagedSk(path) };
    let record: StagedRecord;
    try {
      const res = await this.ddb.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: 'SET promotedBy = list_append(promotedBy, :b)',
          ConditionExpression: 'attribute_exists(pk) AND NOT contains(promotedBy, :id)',
          ExpressionAttributeValues: { ':b': [batchId], ':id': batchId },
          ReturnValues: 'ALL_NEW',
        }),
      );
      record = toRecord(res.Attributes ?? {});
    } catch (error) {
      if (!isConditionalCheckFailure(error)) throw error;
      // This batch reinforced it already: a redelivery. The delivery that did may have died
      // before the change mark below, so it is written again.
      const found = await this.stagedRecord(userId, path);
      if (!found) throw new Error(`staged record ${path} of ${userId} is gone`);
      record = found;
    }
    // The object's promotion_count follows, unless this reinforcement promotes it (promotion removes the object).
    if (record.promotedBy.length < PROMOTIONS_TO_KNOWLEDGE) await this.putStagedFile(userId, record);
    await this.changes.mark(userId, [`staged:${path}`]);
    return record;
  }

  /**
   * The documents first, then one change of the index for all of them: a snapshot (an S3 PUT)
   * per call, not per document (the nightly run stored its findings one snapshot each).
   */
  async putKnowledge(userId: string, entries: ReadonlyArray<KnowledgeEntry>): Promise<void> {
    if (entries.length === 0) return;
    await this.writeKnowledgeFiles(userId, entries);
    const byId = new Map(entries.map((e) => [e.doc.id, e.doc]));
    await this.index.update(userId, (docs) => ({
      docs: [...docs.filter((d) => !byId.has(d.id)), ...byId.values()],
      result: undefined,
    }));
  }

  /** By path, the last entry winning, as writing them one by one would leave them. */
  async writeKnowledgeFiles(userId: string, entries: ReadonlyArray<KnowledgeEntry>): Promise<void> {
    const files = new Map(entries.map((e) => [e.path, e.markdown]));
    await Promise.all(
      [...files].map(([path, markdown]) =>
        this.putText(`${knowledgePrefix(userId)}${path}`, markdown, 'text/markdown; charset=utf-8'),
      ),
    );
  }

  /** Records staged on a day, every user's: each shard of the day. */
  async stagedOn(day: string): Promise<Array<{ userId: string; record: StagedRecord }>> {
    const shards = await Promise.all(
      dayGsiPartitions('STAGEDDAY', day).map((p) =>
        queryAll(this.ddb, {
          TableName: this.tableName,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :d',
          ExpressionAttributeValues: { ':d': p },
        }),
      ),
    );
    return shards.flat().map((item) => ({ userId: String(item.userId), record: toRecord(item) }));
  }

  /** The object first, then the record (see the module comment): a retry finds the record and deletes both. */
  async deleteStaged(userId: string, path: string): Promise<void> {
    await this.deleteStagedFile(userId, path);
    await this.ddb.send(
      new DeleteCommand({ TableName: this.tableName, Key: { pk: keys.userPk(userId), sk: keys.stagedSk(path) } }),
    );
    await this.changes.mark(userId, [`staged:${path}`]);
  }

  async promote(
    userId: string,
    record: StagedRecord,
    knowledgePath: string,
    markdown: string,
    doc: KnowledgeDoc,
  ): Promise<void> {
    await this.putKnowledge(userId, [{ path: knowledgePath, markdown, doc }]);
    await this.settlePromoted(userId, record, knowledgePath);
  }

  /**
   * Rewritten whole from the index entry each time, so two writers leave the file of whichever
   * wrote last; both render a version of the index, which is the record (conditional writes).
   */
  async rewriteKnowledgeFile(userId: string, path: string, render: (current: string | null) => string): Promise<void> {
    const key = `${knowledgePrefix(userId)}${path}`;
    await this.putText(key, render(await getTextOrNull(this.s3, this.bucketName, key)), 'text/markdown; charset=utf-8');
  }

  async settlePromoted(userId: string, record: StagedRecord, knowledgePath: string): Promise<void> {
    await this.deleteStagedFile(userId, record.path);
    await this.ddb.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(userId), sk: keys.stagedSk(record.path) },
        UpdateExpression: 'SET #s = :p, knowledgePath = :k REMOVE gsi1pk, gsi1sk',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':p': 'promoted', ':k': knowledgePath },
      }),
    );
    await this.changes.mark(userId, [`staged:${record.path}`]);
  }

  async recordReview(userId: string, path: string, review: NonNullable<StagedRecord['review']>): Promise<void> {
    const discard = review.decision === 'discarded';
    if (discard) await this.deleteStagedFile(userId, path);
    await this.ddb.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(userId), sk: keys.stagedSk(path) },
        // A discarded record leaves the expiry index too: kept, it keeps its knowledge from coming back.
        UpdateExpression: discard ? 'SET review = :r, #s = :d REMOVE gsi1pk, gsi1sk' : 'SET review = :r',
        ConditionExpression: 'attribute_exists(pk)',
        ...(discard ? { ExpressionAttributeNames: { '#s': 'status' } } : {}),
        ExpressionAttributeValues: { ':r': review, ...(discard ? { ':d': 'discarded' } : {}) },
      }),
    );
    await this.changes.mark(userId, [`staged:${path}`]);
  }

  /** A batch's recorded model answer, for its redeliveries (lib/model/model-output-store.adapter.ts). */
  getModelOutput(userId: string, batchId: string): Promise<ModelResponse | null> {
    return this.outputs.get(userId, batchId);
  }

  putModelOutput(userId: string, batchId: string, response: ModelResponse): Promise<void> {
    return this.outputs.put(userId, batchId, response);
  }

  async putEpisode(userId: string, turnId: number, markdown: string): Promise<string> {
    const key = episodeKey(userId, turnId);
    await this.putText(key, markdown, 'text/markdown; charset=utf-8');
    return key;
  }

  async putEventEpisode(userId: string, episodeId: string, markdown: string): Promise<string> {
    const key = eventEpisodeKey(userId, episodeId);
    await this.putText(key, markdown, 'text/markdown; charset=utf-8');
    return key;
  }

  /** The record, consistent, or null when there is none. */
  private async stagedRecord(userId: string, path: string): Promise<StagedRecord | null> {
    const res = await this.ddb.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(userId), sk: keys.stagedSk(path) },
        ConsistentRead: true,
      }),
    );
    return res.Item ? toRecord(res.Item) : null;
  }

  /** The staged record's markdown, while it is undecided (a promoted or discarded record has none). */
  private async putStagedFile(userId: string, record: StagedRecord | null): Promise<void> {
    if (record?.status !== 'staged') return;
    await this.putText(
      `${stagingPrefix(userId)}${record.path}`,
      restagedMarkdown(record),
      'text/markdown; charset=utf-8',
    );
  }

  /**
   * In the versioned bucket a DELETE leaves a delete marker and the object as a noncurrent
   * version, which the bucket's lifecycle rule expires after 30 days
   * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/DeletingObjectVersions.html).
   */
  private async deleteStagedFile(userId: string, path: string): Promise<void> {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucketName, Key: `${stagingPrefix(userId)}${path}` }));
  }

  private async putText(key: string, body: string, contentType: string): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({ Bucket: this.bucketName, Key: key, Body: body, ContentType: contentType }),
    );
  }
}
