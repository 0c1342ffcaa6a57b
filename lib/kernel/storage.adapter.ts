import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * The marks a store writes beside the items it changes so the search index refolds them
 * (docs/search-index.md): lib/search/search-index-store.adapter.ts DynamoSearchChangeLog.
 */
export interface SearchChangeLog {
  /** One owner's items marked changed, in BatchWriteItem calls of their own. */
  mark(userId: string, itemIds: readonly string[]): Promise<void>;
  /** Several owners' marks as BatchWriteItem put requests, for a store that writes its items in the same batch. */
  requestsFor(marks: ReadonlyArray<{ userId: string; itemId: string }>): Array<Record<string, unknown>>;
  /** One owner's marks as TransactWriteItems Puts, for a store that writes them with its item in one transaction. */
  transactPuts(
    userId: string,
    itemIds: readonly string[],
  ): Array<{ Put: { TableName: string; Item: Record<string, unknown> } }>;
}

/**
 * Where the adapters keep memory: the one DynamoDB table and the one S3 bucket with their
 * clients, and the change log that marks what a write changed for the search index. A
 * composition root (functions/<name>/create-handler.ts, infra/local, bench, tests) builds one
 * and hands it to every store; a store that needs less takes a part of it (StorageTable,
 * StorageBucket).
 */
export interface Storage {
  readonly ddb: DynamoDBDocumentClient;
  readonly s3: S3Client;
  readonly tableName: string;
  readonly bucketName: string;
  readonly changes: SearchChangeLog;
}

/** The storage's table and its client: what a DynamoDB-only store takes. */
export type StorageTable = Pick<Storage, 'ddb' | 'tableName'>;

/** The storage's bucket and its client: what an S3-only store takes. */
export type StorageBucket = Pick<Storage, 's3' | 'bucketName'>;
