/** An in-memory batch log for tests, with a recording variant. */
import type { BatchLog } from './batch-log.js';
import { batchFailureKey, keys, batchLogKey } from '../kernel/memory-paths.js';
import type { BatchLogReader, BatchLogStore } from './batch-log.port.js';
import type { WriteLog } from '../kernel/write-log.fake.js';

export class MemoryBatchLogStore implements BatchLogStore {
  readonly logs = new Map<string, BatchLog>();
  async exists(userId: string, batchId: string) {
    return this.logs.has(`${userId}/${batchId}`);
  }
  readonly failures: BatchLog[] = [];
  async write(log: BatchLog) {
    if (!this.logs.has(`${log.user_id}/${log.batch_id}`)) this.logs.set(`${log.user_id}/${log.batch_id}`, log);
    return batchLogKey(log.user_id, log.batch_id);
  }
  async writeFailure(log: BatchLog) {
    this.failures.push(log);
    return batchFailureKey(log.user_id, log.batch_id);
  }
}

const ddbKey = (userId: string, sk: string) => `${keys.ownerPk(userId)}|${sk}`;

export class RecordingBatchLogStore extends MemoryBatchLogStore implements BatchLogReader {
  constructor(private readonly log: WriteLog) {
    super();
  }
  override async write(log: BatchLog) {
    // The log is in its item; an S3 object only when too large for one, which no fake log is.
    this.log.add('batchLogs', log.user_id, ddbKey(log.user_id, keys.batchSk(log.batch_id)));
    return super.write(log);
  }
  override async writeFailure(log: BatchLog) {
    this.log.add('batchLogs.failure', log.user_id, batchFailureKey(log.user_id, log.batch_id));
    return super.writeFailure(log);
  }
  async list(userId: string, limit: number) {
    return [...this.logs.values()]
      .filter((l) => l.user_id === userId)
      .map((l) => ({ batchId: l.batch_id, status: l.status, timestamp: l.timestamp }))
      .sort((a, b) => keys.batchSk(b.batchId).localeCompare(keys.batchSk(a.batchId)))
      .slice(0, limit);
  }
  async get(userId: string, batchId: string) {
    return this.logs.get(`${userId}/${batchId}`) ?? null;
  }
}
