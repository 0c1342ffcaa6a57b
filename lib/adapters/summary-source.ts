import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { BatchLog } from '../domain/batch-log.js';
import { keys } from '../domain/memory-paths.js';
import type { SummarySource } from '../ports.js';
import { queryAll } from './dynamo-query.js';
import { batchLogOf } from './batch-log-store.js';

/** Batch logs and context summaries in a window: the weekly run's summaries, and what the nightly reads instead of turns already summarised. */
export class DynamoSummarySource implements SummarySource {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly s3: S3Client,
    private readonly tableName: string,
    private readonly bucketName: string,
  ) {}

  private items(userId: string, prefix: string): Promise<Array<Record<string, unknown>>> {
    return queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': prefix },
    });
  }

  async batchLogs(userId: string, fromIso: string, toIso: string): Promise<BatchLog[]> {
    // By the batch's input time (its last turn's), not when it ran: a batch delayed by retries
    // stays in the week its turns are in (issue 20 item 14). Logs written before it: when it ran.
    const at = (i: Record<string, unknown>) => String(i.inputAt ?? i.timestamp);
    const inWindow = (await this.items(userId, keys.batchPrefix)).filter((i) => at(i) >= fromIso && at(i) <= toIso);
    // The logs are in the items (issue 19): no S3 read but for a log too large for one.
    const logs = await Promise.all(inWindow.map((i) => batchLogOf(this.s3, this.bucketName, i)));
    return logs.filter((l): l is BatchLog => l !== null);
  }

  async summaries(userId: string, fromIso: string, toIso: string): Promise<Array<{ id: string; createdAt: string; text: string; sourceTurns: number[] }>> {
    return (await this.items(userId, keys.summaryPrefix))
      .filter((i) => i.deleted !== true && String(i.createdAt) >= fromIso && String(i.createdAt) <= toIso)
      .map((i) => ({ id: String(i.id), createdAt: String(i.createdAt), text: String(i.text ?? ''), sourceTurns: (i.sourceTurns as number[] | undefined) ?? [] }));
  }
}
