/** The stage's queues: each a queue and its DLQ, encrypted with the data key, with their alarms. */
import { Duration, type Stack } from 'aws-cdk-lib';
import { ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { DeduplicationScope, FifoThroughputLimit, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { StageConfig } from '../config/stages.js';
import { names, type QueueDefinition, type QueueKey } from '../resources.js';
import { NotifyingAlarm } from './notifying-alarm.js';

/**
 * How long SQS reuses a data key of the queue's KMS key before asking KMS again (the
 * stage's KMS requests). SetQueueAttributes' KmsDataKeyReusePeriodSeconds: "between 60 seconds
 * (1 minute) and 86,400 seconds (24 hours). Default: 300 (5 minutes). A shorter time period
 * provides better security but results in more calls to KMS"
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html).
 * An hour: a twelfth of the default's GenerateDataKey and Decrypt calls per caller and queue;
 * a data key that leaked would open an hour of one queue's messages (docs/encryption.md).
 */
export const SQS_DATA_KEY_REUSE_SECONDS = 3600;

/**
 * High throughput for every FIFO queue and FIFO DLQ: both attributes are required, or SQS falls
 * back to normal throughput (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/enable-high-throughput-fifo.html,
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/high-throughput-fifo.html).
 * The quota then applies per message group, and every group here is one user, so a nightly
 * fan-out or a burst of turns is not capped by one queue-wide quota; the DLQs get it too, so a
 * mass failure (every job of a fan-out parked at once) is not either.
 *
 * Deduplication then holds only within a message group. That is correct here because every
 * message's deduplication id is derived from its group, the user id: turns use
 * sha256(userId, turnId) (`turnDeduplicationId`, lib/turns/sqs-turn-publisher.adapter.ts), other
 * TurnQueue events sha256 of a body that carries the userId, jobs
 * sha256(userId, jobId) (`jobDeduplicationId`, lib/jobs/sqs-job-queue.adapter.ts), all sent with
 * MessageGroupId = userId. Two messages with one deduplication id are therefore in one group,
 * and queue-wide scope would drop nothing that group scope keeps.
 */
const FIFO_HIGH_THROUGHPUT = {
  deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
  fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
} as const;

export interface MemoryQueue {
  queue: Queue;
  dlq: Queue;
}

/** What a queue is built with: the stage and its settings, the data key, the alarm topic. */
export interface MemoryQueueProps {
  stage: string;
  config: StageConfig;
  dataKey: IKey;
  alarmTopic: ITopic;
}

/**
 * A queue and its DLQ, both encrypted with the data key and refusing plain HTTP, with two
 * alarms, each with its action: messages in the DLQ (redrive them), and the oldest message
 * waiting too long (its consumer is failing or throttled). No alarm on the queue's depth: a
 * deep queue whose oldest message is young is draining and needs nothing; one that is not
 * draining ages, and the age alarm says so.
 */
export function memoryQueue(stack: Stack, props: MemoryQueueProps, key: QueueKey, def: QueueDefinition): MemoryQueue {
  const n = names(props.stage);
  const fifo = def.fifo ? { fifo: true, contentBasedDeduplication: false, ...FIFO_HIGH_THROUGHPUT } : {};
  const dlq = new Queue(stack, `${def.id}Dlq`, {
    queueName: n.dlq(def),
    ...fifo,
    retentionPeriod: Duration.days(14),
    encryption: QueueEncryption.KMS,
    encryptionMasterKey: props.dataKey,
    dataKeyReuse: Duration.seconds(SQS_DATA_KEY_REUSE_SECONDS),
    enforceSSL: true,
  });
  const queue = new Queue(stack, def.id, {
    queueName: n.queue(def),
    ...fifo,
    visibilityTimeout: Duration.seconds(def.visibilityTimeoutSeconds),
    deliveryDelay: Duration.seconds(def.delaySeconds ?? 0),
    encryption: QueueEncryption.KMS,
    encryptionMasterKey: props.dataKey,
    dataKeyReuse: Duration.seconds(SQS_DATA_KEY_REUSE_SECONDS),
    enforceSSL: true,
    deadLetterQueue: { queue: dlq, maxReceiveCount: def.maxReceiveCount },
  });
  const topic = props.alarmTopic;
  new NotifyingAlarm(stack, `${def.id}DlqDepthAlarm`, {
    topic,
    alarmDescription: `Messages parked in the ${key} dead-letter queue. Action: find the message id in the consuming function's log, fix the cause, then start a DLQ redrive (docs/deploy.md, "Runbook").`,
    metric: dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  // ApproximateAgeOfOldestMessage, Maximum over 5 minutes. AWS does not document whether a
  // message's delivery delay counts towards its age, so the threshold adds the queue's delay
  // (IdleQueue: 300 s) to the allowed wait: right if it counts, 5 minutes lenient if it does
  // not. A FIFO message that keeps failing holds its group and ages until it reaches the DLQ;
  // on a standard queue, SQS leaves a message received 3+ times out of this metric.
  // https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html
  // It stands in for the consumer's Errors and Throttles alarms: a failed or throttled batch
  // goes back to the queue and is received again, so the messages age
  // (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).
  new NotifyingAlarm(stack, `${def.id}AgeAlarm`, {
    topic,
    alarmDescription: `The oldest message of the ${key} queue has waited over ${props.config.alarms.queueAgeSeconds[key]} s beyond its delivery delay. Action: read the consuming function's Errors and Throttles graphs and log group; fix the failure or raise its concurrency or the Bedrock quota (docs/deploy.md, "Runbook").`,
    metric: queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5) }),
    threshold: props.config.alarms.queueAgeSeconds[key] + (def.delaySeconds ?? 0),
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  return { queue, dlq };
}
