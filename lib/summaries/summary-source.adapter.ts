import type { S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { BatchLog } from '../batches/batch-log.js';
import { keys } from '../kernel/memory-paths.js';
import type { SummarySource, WindowBounds } from './summary.port.js';
import { batchLogOf } from '../batches/batch-log-store.adapter.js';
import type { Storage } from '../kernel/storage.adapter.js';

type Item = Record<string, unknown>;

/**
 * Batch logs and context summaries in a window: the weekly run's summaries, and what the
 * nightly reads instead of turns already summarised. Read by key range, newest turn first, so
 * a run reads its window, not the user's history (docs/data-model.md, "Window reads by key
 * range"): both kinds are keyed by the last turn their id names (`keys.batchSk`,
 * `keys.summarySk`), and turn ids rise with time.
 */
export class DynamoS3SummarySource implements SummarySource {
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

  /**
   * The items of a kind from the newest turn down to the first live item dated before the
   * window (`at` < `fromIso`) and the others under its turn; none under `sinceTurn`. Why that
   * stop loses nothing: a batch's input time is its last read turn's, so logs sort by it; a
   * summary is asked for after its turns were counted and before any later turn was (it takes
   * every turn not yet summarised), so summaries sort by `createdAt` too — but for a manual
   * one over an earlier summary's turns, which shares that summary's turn, and only a deleted
   * summary can be newer than its source (hence the live test). The Query's key condition is a
   * `BETWEEN` on the sort key, read in descending order (ScanIndexForward false:
   * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.KeyConditionExpressions.html),
   * eventually consistent as before, and billed on the total size of the items it reads, rounded
   * up to 4 KB per request (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html);
   * `Limit` caps the items a page reads (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.Other.html),
   * so without a lower bound pages grow 16, 32, 64, 100 and the read passes the window by one
   * page at most.
   */
  private async window(
    userId: string,
    prefix: 'BATCH#' | 'SUMMARY#',
    bounds: WindowBounds,
    at: (i: Item) => string,
    live: (i: Item) => boolean,
  ): Promise<Item[]> {
    const { low, high } = keys.turnKeyed(prefix, bounds.sinceTurn ?? 0);
    const turnOf = (i: Item) => String(i.sk).slice(prefix.length, prefix.length + 10);
    const out: Item[] = [];
    let stopAfter: string | null = null;
    let page = 16;
    let start: Record<string, unknown> | undefined;
    do {
      const res = await this.ddb.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
          ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':low': low, ':high': high },
          ScanIndexForward: false,
          // A lower bound makes the range the window's already: one page.
          ...(bounds.sinceTurn === undefined ? { Limit: page } : {}),
          ExclusiveStartKey: start,
        }),
      );
      for (const item of res.Items ?? []) {
        if (stopAfter !== null && turnOf(item) !== stopAfter) return out;
        out.push(item);
        if (stopAfter === null && live(item) && at(item) < bounds.fromIso) stopAfter = turnOf(item);
      }
      page = Math.min(page * 2, 100);
      start = res.LastEvaluatedKey;
    } while (start);
    return out;
  }

  async batchLogs(userId: string, bounds: WindowBounds): Promise<BatchLog[]> {
    // By the batch's input time (its last turn's), not when it ran: a batch delayed by retries
    // stays in the week its turns are in. Logs written before it: when it ran.
    const at = (i: Item) => String(i.inputAt ?? i.timestamp);
    const inWindow = (await this.window(userId, keys.batchPrefix, bounds, at, () => true))
      .filter((i) => at(i) >= bounds.fromIso && at(i) <= bounds.toIso)
      .sort((a, b) => String(a.batchId).localeCompare(String(b.batchId)));
    // The logs are in the items: no S3 read but for a log too large for one.
    const logs = await Promise.all(inWindow.map((i) => batchLogOf(this.s3, this.bucketName, i)));
    return logs.filter((l): l is BatchLog => l !== null);
  }

  async summaries(
    userId: string,
    bounds: WindowBounds,
  ): Promise<Array<{ id: string; createdAt: string; text: string; sourceTurns: number[] }>> {
    const live = (i: Item) => i.deleted !== true;
    return (await this.window(userId, keys.summaryPrefix, bounds, (i) => String(i.createdAt), live))
      .filter((i) => live(i) && String(i.createdAt) >= bounds.fromIso && String(i.createdAt) <= bounds.toIso)
      .map((i) => ({
        id: String(i.id),
        createdAt: String(i.createdAt),
        text: String(i.text ?? ''),
        sourceTurns: (i.sourceTurns as number[] | undefined) ?? [],
      }))
      .sort((a, b) => a.id.localeCompare(b.id));
  }
}
