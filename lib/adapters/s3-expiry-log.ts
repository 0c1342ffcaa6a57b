import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { expiryLogKey } from '../domain/memory-paths.js';
import type { ExpiryLog } from '../ports.js';

/** Each expiry sweep's deletions for a user, with reasons, as JSON under Logs/expiry/. */
export class S3ExpiryLog implements ExpiryLog {
  constructor(
    private readonly s3: S3Client,
    private readonly bucketName: string,
  ) {}

  async write(userId: string, sweptAt: string, deletions: Parameters<ExpiryLog['write']>[2]): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({ Bucket: this.bucketName, Key: expiryLogKey(userId, sweptAt), Body: JSON.stringify({ sweptAt, deletions }, null, 2), ContentType: 'application/json' }),
    );
  }
}
