/**
 * A user's partition and prefix read and written whole, for export and import
 * (lib/archive/user-archive.ts). Records go back with BatchWriteItem puts (25 a request,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html), the
 * signal state last, so an import that failed part way can be asked again (see
 * lib/archive/archive-api.ts). Documents go back with their content type, and turn
 * documents with the `kind=turn` tag the archival rule filters on (as the turn store writes them).
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { currentSk, keys, turnsFolder, userPrefix } from '../kernel/memory-paths.js';
import { ARCHIVE_SET, type ArchiveDocument, isBinaryPath } from './user-archive.js';
import type { UserArchiveStore } from './user-archive.port.js';
import { batchWriteAll, queryAll } from '../kernel/dynamo-query.adapter.js';
import { inGroups } from '../kernel/in-groups.js';
import { listAllKeys } from '../kernel/s3-objects.adapter.js';
import type { Storage } from '../kernel/storage.adapter.js';

/** Objects read or written at once. */
const PARALLEL_OBJECTS = 8;

const inBatches = <T, R>(values: readonly T[], each: (value: T) => Promise<R>): Promise<R[]> =>
  inGroups(values, PARALLEL_OBJECTS, each);

/**
 * A DynamoDB set attribute at a record's top level (a session's ephemeral entries are a string
 * set) has no JSON form: in an archive it is `{"$set": [...]}`, and a Set again when restored.
 */
const SET = ARCHIVE_SET;
function mapSets(
  item: Record<string, unknown>,
  toJson: ((set: Set<unknown>) => unknown) | null,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(item).map(([k, v]) => {
      if (toJson && v instanceof Set) return [k, toJson(v)];
      if (
        !toJson &&
        v !== null &&
        typeof v === 'object' &&
        !Array.isArray(v) &&
        Object.keys(v).length === 1 &&
        Array.isArray((v as Record<string, unknown>)[SET])
      )
        return [k, new Set((v as Record<string, unknown[]>)[SET])];
      return [k, v];
    }),
  );
}

export class DynamoS3UserArchiveStore implements UserArchiveStore {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly s3: S3Client;
  private readonly tableName: string;
  private readonly bucketName: string;

  constructor(storage: Omit<Storage, 'changes'>) {
    this.ddb = storage.ddb;
    this.s3 = storage.s3;
    this.tableName = storage.tableName;
    this.bucketName = storage.bucketName;
  }

  async records(userId: string): Promise<Array<Record<string, unknown>>> {
    const items = await queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId) },
    });
    return items.map((item) => mapSets(item, (set) => ({ [SET]: [...set] })));
  }

  async documents(userId: string): Promise<ArchiveDocument[]> {
    const prefix = userPrefix(userId);
    const paths = (await listAllKeys(this.s3, this.bucketName, prefix)).map((key) => key.slice(prefix.length));
    return inBatches(paths, async (path) => {
      const res = await this.s3.send(new GetObjectCommand({ Bucket: this.bucketName, Key: `${prefix}${path}` }));
      const type = res.ContentType ? { contentType: res.ContentType } : {};
      if (isBinaryPath(path))
        return {
          path,
          ...type,
          base64: Buffer.from((await res.Body?.transformToByteArray()) ?? new Uint8Array()).toString('base64'),
        };
      return { path, ...type, text: (await res.Body?.transformToString('utf-8')) ?? '' };
    });
  }

  async putRecords(records: ReadonlyArray<Record<string, unknown>>): Promise<void> {
    // An archive exported before 2026-11-27 names batch logs and summaries by id: they go under their turn keys.
    const puts = (rs: ReadonlyArray<Record<string, unknown>>) =>
      rs.map((r) => ({
        PutRequest: { Item: mapSets({ ...r, ...(typeof r.sk === 'string' ? { sk: currentSk(r.sk) } : {}) }, null) },
      }));
    await batchWriteAll(this.ddb, this.tableName, puts(records.filter((r) => r.sk !== keys.signalSk)));
    await batchWriteAll(this.ddb, this.tableName, puts(records.filter((r) => r.sk === keys.signalSk)));
  }

  async putDocuments(userId: string, documents: readonly ArchiveDocument[]): Promise<void> {
    const prefix = userPrefix(userId);
    await inBatches(documents, (d) =>
      this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucketName,
          Key: `${prefix}${d.path}`,
          Body: d.base64 !== undefined ? Buffer.from(d.base64, 'base64') : d.text,
          ...(d.contentType ? { ContentType: d.contentType } : {}),
          ...(d.path.startsWith(turnsFolder) ? { Tagging: 'kind=turn' } : {}),
        }),
      ),
    );
  }
}
