/**
 * Routine reflections kept for the nightly batch inference job, one S3 object each under
 * `batch-inference/deferred/<user>/<job>.json` (lib/batch-inference/routine-batch.ts). A forget
 * erases the user's (lib/forget/forget-user.ts); the bucket's lifecycle rule on `batch-inference/`
 * expires what is left (infra/stacks/stateful-stack.ts).
 * The bucket is versioned, so removing one adds a delete marker; DeleteObject is idempotent on a
 * key already deleted (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html).
 */
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import * as z from 'zod';
import { JobSchema } from '../../events/job.js';
import { inGroups } from '../kernel/in-groups.js';
import { getTextOrNull, listAllKeys } from '../kernel/s3-objects.adapter.js';
import type { StorageBucket } from '../kernel/storage.adapter.js';
import { deferredPrefix, deferredRoot } from '../kernel/memory-paths.js';
import type { DeferredReflection } from './batch-inference.js';
import type { DeferredReflections } from './batch-inference.port.js';

const keyOf = (userId: string, jobId: string) => `${deferredPrefix(userId)}${jobId}.json`;

const DeferredReflectionSchema = z.object({
  job: JobSchema,
  request: z.object({
    system: z.string(),
    prompt: z.string(),
    toolName: z.string(),
    toolDescription: z.string(),
    toolInputSchema: z.record(z.string(), z.unknown()),
    temperature: z.number(),
    maxTokens: z.number().int().positive(),
  }),
  deferredAt: z.string(),
});

/** Objects read or removed at once. */
const CONCURRENCY = 16;

export class S3DeferredReflections implements DeferredReflections {
  constructor(private readonly storage: StorageBucket) {}

  async put(reflection: DeferredReflection): Promise<void> {
    const { s3, bucketName } = this.storage;
    await s3.send(
      new PutObjectCommand({
        Bucket: bucketName,
        Key: keyOf(reflection.job.userId, reflection.job.jobId),
        Body: JSON.stringify(reflection),
        ContentType: 'application/json',
      }),
    );
  }

  /** Every kept reflection; one that is gone by the time it is read, or does not parse, is left out (the lifecycle rule expires it). */
  async list(userId?: string): Promise<Array<DeferredReflection & { key: string }>> {
    const { s3, bucketName } = this.storage;
    const prefix = userId === undefined ? deferredRoot : deferredPrefix(userId);
    const keys = (await listAllKeys(s3, bucketName, prefix)).filter((k) => k.endsWith('.json'));
    const read = await inGroups(keys, CONCURRENCY, async (key) => {
      const text = await getTextOrNull(s3, bucketName, key);
      const parsed = text === null ? null : DeferredReflectionSchema.safeParse(JSON.parse(text));
      return parsed?.success ? [{ ...parsed.data, key }] : [];
    });
    return read.flat();
  }

  async remove(keys: readonly string[]): Promise<void> {
    const { s3, bucketName } = this.storage;
    await inGroups(keys, CONCURRENCY, (Key) => s3.send(new DeleteObjectCommand({ Bucket: bucketName, Key })));
  }
}
