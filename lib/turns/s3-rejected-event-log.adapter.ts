import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getText, listAllKeys } from '../kernel/s3-objects.adapter.js';
import { rejectedEventKey, rejectedPrefix } from '../kernel/memory-paths.js';
import type { RejectedEvent, RejectedEventLog } from './turn.port.js';
import type { StorageBucket } from '../kernel/storage.adapter.js';

/** Rejected records kept in S3 under `rejected/{day}/{source}/{messageId}.json`, listable by day. */
export class S3RejectedEventLog implements RejectedEventLog {
  private readonly s3: S3Client;
  private readonly bucketName: string;

  constructor(storage: StorageBucket) {
    this.s3 = storage.s3;
    this.bucketName = storage.bucketName;
  }

  async keep(event: RejectedEvent): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucketName,
        Key: rejectedEventKey(event.receivedAt.slice(0, 10), event.source, event.messageId),
        Body: JSON.stringify(event, null, 2),
        ContentType: 'application/json',
      }),
    );
  }

  /** Rejected records, oldest day first; `day` (YYYY-MM-DD) narrows to one day. */
  async list(day?: string): Promise<RejectedEvent[]> {
    const keys = await listAllKeys(this.s3, this.bucketName, rejectedPrefix(day));
    return Promise.all(
      keys.map(async (key) => JSON.parse(await getText(this.s3, this.bucketName, key)) as RejectedEvent),
    );
  }
}
