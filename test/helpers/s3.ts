import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoS3BatchLogStore } from '../../lib/batches/batch-log-store.adapter.js';
import { getText, listAllKeys } from '../../lib/kernel/s3-objects.adapter.js';
import type { BatchLog } from '../../lib/batches/batch-log.js';
import type { StackInfo } from '../../infra/local/harness.js';
import { listObjectVersions } from '../../infra/local/state-dump.js';
import { createDocumentClient, createDynamoDbClient } from '../../lib/kernel/aws-clients.adapter.js';
import { DynamoS3KnowledgeStore } from '../../lib/knowledge/knowledge-store.adapter.js';
import { DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';

/** An S3 client of the local harness's endpoint (path-style, as fauxqs needs). */
const localS3 = (info: StackInfo): S3Client =>
  new S3Client({
    region: info.region,
    endpoint: info.endpoints.s3,
    forcePathStyle: true,
    credentials: info.credentials,
  });

/** Read access to the local harness's bucket, for assertions; and to a batch's log (in its DynamoDB item). */
export function bucketReader(info: StackInfo) {
  const s3 = localS3(info);
  const ddb = new DynamoDBClient({
    region: info.region,
    endpoint: info.endpoints.dynamodb,
    credentials: info.credentials,
  });
  const logs = new DynamoS3BatchLogStore({
    ddb: DynamoDBDocumentClient.from(ddb),
    s3,
    tableName: info.tableName,
    bucketName: info.bucketName,
  });
  return {
    list: (prefix: string) => listAllKeys(s3, info.bucketName, prefix),
    /** Every version and delete marker the versioned bucket keeps under `prefix`, current or not. */
    versions: (prefix: string) => listObjectVersions(s3, info.bucketName, prefix),
    /** The text of one version of an object. */
    versionText: async (key: string, versionId: string): Promise<string> =>
      (await (
        await s3.send(new GetObjectCommand({ Bucket: info.bucketName, Key: key, VersionId: versionId }))
      ).Body?.transformToString('utf-8')) ?? '',
    text: (key: string): Promise<string> => getText(s3, info.bucketName, key),
    /** The batch's log, wherever the store keeps it; throws when there is none. */
    batchLog: async (userId: string, batchId: string): Promise<BatchLog> => {
      const log = await logs.get(userId, batchId);
      if (!log) throw new Error(`no batch log ${batchId} of ${userId}`);
      return log;
    },
    destroy: () => {
      s3.destroy();
      ddb.destroy();
    },
  };
}

/** The harness's Knowledge store, to put facts as a promotion would (`destroy` closes its S3 client). */
export function localKnowledgeStore(info: StackInfo): { knowledge: DynamoS3KnowledgeStore; destroy: () => void } {
  const ddb = createDocumentClient(createDynamoDbClient());
  const s3 = localS3(info);
  const knowledge = new DynamoS3KnowledgeStore({
    ddb,
    s3,
    tableName: info.tableName,
    bucketName: info.bucketName,
    changes: new DynamoSearchChangeLog({ ddb, tableName: info.tableName }),
  });
  return { knowledge, destroy: () => s3.destroy() };
}
