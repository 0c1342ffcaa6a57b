/**
 * signal — TurnQueue (SQS FIFO, group = userId) → turn documents and index → signal
 * state → jobs and idle checks. Adapts the SQS event to the ingest-turns use
 * case and reports partial batch failures. The Lambda entry (handler.ts) builds it once
 * per container; the local harness builds it with its own clients and clock.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { AwsClients } from '../../lib/kernel/aws-clients.adapter.js';
import type { Storage } from '../../lib/kernel/storage.adapter.js';
import { DynamoSignalStateStore } from '../../lib/signals/dynamo-signal-state-store.adapter.js';
import { DynamoMemoryItemStore } from '../../lib/items/memory-item-store.adapter.js';
import { DynamoSourceReliabilityStore } from '../../lib/sources/dynamo-source-reliability-store.adapter.js';
import { DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { DynamoS3TurnStore } from '../../lib/turns/dynamo-turn-store.adapter.js';
import { createLogger } from '../../lib/kernel/logger.adapter.js';
import { StageMetrics } from '../../lib/kernel/metrics.adapter.js';
import { S3ClaimCheckStore } from '../../lib/turns/s3-claim-check-store.adapter.js';
import { S3RejectedEventLog } from '../../lib/turns/s3-rejected-event-log.adapter.js';
import { SqsIdleScheduler } from '../../lib/signals/sqs-idle-scheduler.adapter.js';
import { SqsJobQueue } from '../../lib/jobs/sqs-job-queue.adapter.js';
import { parseSignalConfig } from '../../lib/signals/signal-weights.js';
import { parseTierPolicy } from '../../lib/tiers/tier-settings.js';
import type { Clock } from '../../lib/kernel/runtime.port.js';
import { DynamoForgetLog } from '../../lib/forget/dynamo-forget-log.adapter.js';
import type { IngestDeps } from '../../lib/turns/ingest-deps.js';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import { DynamoUserSettingsStore } from '../../lib/settings/dynamo-user-settings-store.adapter.js';
import type { SignalEnv } from './env.js';

export type SignalHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export function createSignalHandler(
  env: SignalEnv,
  clients: Pick<AwsClients, 'ddb' | 's3' | 'sqs'>,
  clock: Clock,
): SignalHandler {
  const { ddb, s3, sqs } = clients;
  const { logger, log } = createLogger('signal');
  const metrics = new StageMetrics('signal', env.STAGE);
  // Turn marks expire by TTL; a user who talks gets a weekly job, which compacts them (docs/search-index.md, "Liveness").
  const table = { ddb, tableName: env.TABLE_NAME };
  const storage: Storage = {
    ...table,
    s3,
    bucketName: env.BUCKET_NAME,
    changes: new DynamoSearchChangeLog(table, { expiring: true }),
  };
  const deps: IngestDeps = {
    turns: new DynamoS3TurnStore(storage),
    signalState: new DynamoSignalStateStore(storage, clock),
    jobs: new SqsJobQueue(sqs, env.JOB_QUEUE_URL),
    idle: new SqsIdleScheduler(sqs, env.IDLE_QUEUE_URL),
    claims: new S3ClaimCheckStore(storage),
    rejected: new S3RejectedEventLog(storage),
    sources: new DynamoSourceReliabilityStore(storage, clock),
    settings: new DynamoUserSettingsStore(storage),
    items: new DynamoMemoryItemStore(storage),
    clock,
    log,
    config: parseSignalConfig(env.SIGNAL_CONFIG),
    tierPolicy: parseTierPolicy(env.TIER_POLICY),
    redaction: { personalData: env.REDACT_PERSONAL_DATA === 'true' },
    source: 'turn-queue',
    forgets: new DynamoForgetLog(storage),
  };

  return middy(async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const result = await ingestTurns(
      event.Records.map((r) => ({ messageId: r.messageId, body: r.body })),
      deps,
    );
    // The one metric an alarm reads (lib/kernel/metrics.adapter.ts); every other count is a field of the log line below.
    metrics.rejectedRecords(result.rejected);
    logger.info('turn batch processed', {
      records: event.Records.length,
      accepted: result.accepted,
      duplicates: result.duplicates,
      late: result.late,
      rejected: result.rejected,
      controlEvents: result.controlEvents,
      alreadyApplied: result.alreadyApplied,
      forgotten: result.forgotten,
      // Counts by kind, never the values.
      redacted: result.redacted,
      jobs: result.jobs.map((j) => `${j.kind}:${j.jobId}`),
      failed: result.failedMessageIds.length,
    });
    return { batchItemFailures: result.failedMessageIds.map((id) => ({ itemIdentifier: id })) };
  })
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics.metrics)) as unknown as SignalHandler;
}
