/**
 * The resources both the CDK app and the local harness create, defined once so that
 * local and cloud cannot drift apart.
 */
export const TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /**
   * The by-day indexes, write-sharded (`lib/kernel/memory-paths.ts`): activity markers,
   * staged records by day, runs by day. Projection ALL (docs/data-model.md says why).
   */
  gsi: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  /** Epoch seconds; DynamoDB deletes expired items late, so readers filter too. */
  ttlAttribute: 'expiresAt',
} as const;

export interface QueueDefinition {
  /** Construct id and base of the queue's name. */
  id: string;
  fifo: boolean;
  /** Cloud visibility timeout: 6 × the consumer's timeout, as AWS advises for event sources. */
  visibilityTimeoutSeconds: number;
  /** Local visibility timeout: short, so a failed record comes back within seconds. */
  localVisibilityTimeoutSeconds: number;
  /** Deliveries before a message is parked in the queue's DLQ. */
  maxReceiveCount: number;
  delaySeconds?: number;
}

/** API Gateway HTTP APIs cut an integration off at 30 s; the API function stops just before. */
export const FUNCTION_TIMEOUT_SECONDS = { signal: 30, reflector: 120, idle: 30, sweep: 300, api: 29 } as const;

export const QUEUES = {
  turn: {
    id: 'TurnQueue',
    fifo: true,
    visibilityTimeoutSeconds: 6 * FUNCTION_TIMEOUT_SECONDS.signal,
    localVisibilityTimeoutSeconds: 2,
    maxReceiveCount: 5,
  },
  /** The job queue: every job kind (batch, summary, nightly, weekly, forget) waits here. */
  job: {
    // The construct id names the deployed queue (logical id, physical name): renaming it replaces the queue.
    id: 'ReflectionQueue',
    fifo: true,
    visibilityTimeoutSeconds: 6 * FUNCTION_TIMEOUT_SECONDS.reflector,
    localVisibilityTimeoutSeconds: 5,
    // Five deliveries before a job is parked (AWS advises at least 5 for an event source's
    // queue, so that throttling does not send messages to the DLQ:
    // https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html). A nightly
    // fan-out to every user meets Bedrock's per-minute quotas; each delivery already retries a
    // throttled call with backoff (lib/kernel/aws-clients.adapter.ts), and five deliveries 12 minutes
    // apart outlast a throttling episode of most of an hour. Req R-ERR-1, R-ERR-2's "retry once" stays the
    // rule for an unusable answer (functions/reflector/job-record-handler.ts).
    maxReceiveCount: 5,
  },
  idle: {
    id: 'IdleQueue',
    fifo: false,
    visibilityTimeoutSeconds: 6 * FUNCTION_TIMEOUT_SECONDS.idle,
    localVisibilityTimeoutSeconds: 3,
    maxReceiveCount: 5,
    // Req R-SUM-1: the idle check fires 5 minutes after the user's last message.
    delaySeconds: 300,
  },
} as const satisfies Record<string, QueueDefinition>;

export type QueueKey = keyof typeof QUEUES;

/**
 * Physical names: one isolated copy per stage. Tables and queues are named per account and
 * Region; bucket names are global within a partition
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html), so the
 * bucket's carries the account and the Region: the same stage deployed in two Regions of one
 * account gets two buckets, not a name clash. At most 63 characters (same page): with the
 * longest Region names (14 characters) that leaves 17 for the stage (BUCKET_NAME_MAX_LENGTH).
 */
export const names = (stage: string) => ({
  table: `reflective-memory-${stage}`,
  bucket: (account: string, region: string) => `reflective-memory-${stage}-${account}-${region}`,
  queue: (q: QueueDefinition) => `reflective-memory-${stage}-${q.id}${q.fifo ? '.fifo' : ''}`,
  dlq: (q: QueueDefinition) => `reflective-memory-${stage}-${q.id}-dlq${q.fifo ? '.fifo' : ''}`,
});

/** S3's limit on a bucket name's length (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html). */
export const BUCKET_NAME_MAX_LENGTH = 63;

/** Scheduled sweeps. Turn archival has no sweep: the bucket's lifecycle rule, which S3 runs daily, does it. */
export const SWEEPS = ['nightly', 'weekly', 'expiry'] as const;
