import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership, StorageClass } from 'aws-cdk-lib/aws-s3';
import { SleepTimeConfigSchema } from '../../lib/domain/sleep-time/config.js';
import { DeduplicationScope, FifoThroughputLimit, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { StageConfig } from '../config/stages.js';
import { names, type QueueDefinition, QUEUES, type QueueKey, TABLE } from '../resources.js';

export interface StatefulStackProps extends StackProps {
  stage: string;
  config: StageConfig;
}

export interface MemoryQueue {
  queue: Queue;
  dlq: Queue;
}

/** Tables, buckets and queues: what outlives a deployment of the functions. */
export class StatefulStack extends Stack {
  readonly table: Table;
  readonly bucket: Bucket;
  readonly queues: Record<QueueKey, MemoryQueue>;

  constructor(scope: Construct, id: string, props: StatefulStackProps) {
    super(scope, id, props);
    const n = names(props.stage);
    const removalPolicy = props.config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const sleep = SleepTimeConfigSchema.parse(props.config.sleepTime);

    this.table = new Table(this, 'MemoryTable', {
      tableName: n.table,
      partitionKey: { name: TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE.ttlAttribute,
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: TABLE.gsi.name,
      partitionKey: { name: TABLE.gsi.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.gsi.sortKey, type: AttributeType.STRING },
    });

    this.bucket = new Bucket(this, 'MemoryBucket', {
      bucketName: n.bucket(this.account),
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      versioned: true,
      lifecycleRules: [
        { noncurrentVersionExpiration: Duration.days(30) },
        // Claim checks are read once by the signal function, which stores the turn itself.
        { prefix: 'claims/', expiration: Duration.days(14) },
        // Seed 002 §12, turn archival: originals (tagged kind=turn) move to Glacier Instant
        // Retrieval — same GetObject, still retrievable — while the turn index keeps a summary.
        // Only originals over 128 KiB: below that S3 bills cold classes as 128 KiB, so moving
        // a 2 KiB turn would cost more than keeping it.
        {
          id: 'ArchiveTurns',
          tagFilters: { kind: 'turn' },
          objectSizeGreaterThan: 128 * 1024,
          transitions: [{ storageClass: StorageClass.GLACIER_INSTANT_RETRIEVAL, transitionAfter: Duration.days(sleep.turnArchiveDays) }],
        },
      ],
      removalPolicy,
      autoDeleteObjects: !props.config.retainData,
    });

    const make = (key: QueueKey, def: QueueDefinition): MemoryQueue => {
      const fifo = def.fifo ? { fifo: true, contentBasedDeduplication: false } : {};
      const throughput = def.fifo ? { deduplicationScope: DeduplicationScope.QUEUE, fifoThroughputLimit: FifoThroughputLimit.PER_QUEUE } : {};
      const dlq = new Queue(this, `${def.id}Dlq`, {
        queueName: n.dlq(def),
        ...fifo,
        retentionPeriod: Duration.days(14),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      const queue = new Queue(this, def.id, {
        queueName: n.queue(def),
        ...fifo,
        ...throughput,
        visibilityTimeout: Duration.seconds(def.visibilityTimeoutSeconds),
        deliveryDelay: Duration.seconds(def.delaySeconds ?? 0),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: dlq, maxReceiveCount: def.maxReceiveCount },
      });
      new Alarm(this, `${def.id}DlqDepthAlarm`, {
        alarmDescription: `Messages parked in the ${key} dead-letter queue: inspect, fix the cause, then redrive.`,
        metric: dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      new Alarm(this, `${def.id}DepthAlarm`, {
        alarmDescription: `The ${key} queue is backing up.`,
        metric: queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
        threshold: props.config.queueDepthAlarm,
        evaluationPeriods: 3,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      return { queue, dlq };
    };
    this.queues = {
      turn: make('turn', QUEUES.turn),
      reflection: make('reflection', QUEUES.reflection),
      idle: make('idle', QUEUES.idle),
    };

    // What publishers need (see the README's "Publish a turn").
    new CfnOutput(this, 'TurnQueueUrl', { value: this.queues.turn.queue.queueUrl, description: 'TURN_QUEUE_URL: where agents publish turn.saved, session.closed and agent.event' });
    new CfnOutput(this, 'MemoryBucketName', { value: this.bucket.bucketName, description: 'MEMORY_BUCKET: claim checks for large turns go under claims/' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
  }
}
