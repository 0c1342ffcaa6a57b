import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ReflectionJob } from '../../events/reflection-job.js';
import { deferredJobKey } from '../domain/memory-paths.js';
import type { DeferredJobLog } from '../ports.js';

/** Jobs this version cannot run yet, kept under the user's `Logs/reflector/deferred/` to replay later. */
export class S3DeferredJobLog implements DeferredJobLog {
  constructor(
    private readonly s3: S3Client,
    private readonly bucketName: string,
  ) {}

  async keep(job: ReflectionJob, reason: string): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucketName,
        Key: deferredJobKey(job.userId, job.jobId),
        Body: JSON.stringify({ reason, job }, null, 2),
        ContentType: 'application/json',
      }),
    );
  }
}
