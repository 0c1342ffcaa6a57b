import { Arn, ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Token, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { StandardThreatProtectionMode, UserPool, UserPoolClient, UserPoolGroup } from 'aws-cdk-lib/aws-cognito';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership, StorageClass } from 'aws-cdk-lib/aws-s3';
import { ADMIN_GROUP } from '../../lib/domain/access.js';
import { SleepTimeConfigSchema } from '../../lib/domain/sleep-time/config.js';
import { DeduplicationScope, FifoThroughputLimit, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { NagSuppressions } from 'cdk-nag';
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

/** The Cognito identities the memory API trusts when the stage names no OIDC issuer of its own. */
export interface MemoryUserPool {
  userPool: UserPool;
  client: UserPoolClient;
  /** Members may act on every user's memory and write GLOBAL. */
  adminGroup: UserPoolGroup;
}

/** Tables, buckets, queues and user identities: what outlives a deployment of the functions. */
export class StatefulStack extends Stack {
  /**
   * The stage's data key: encrypts the table, the bucket, every queue and DLQ. Created here
   * (rotation on, per-stage alias) unless the stage brings its own (`config.dataKeyArn`).
   */
  readonly dataKey: IKey;
  readonly table: Table;
  readonly bucket: Bucket;
  readonly queues: Record<QueueKey, MemoryQueue>;
  /** Set only when `config.auth.issuer` is not: then the memory API trusts this pool. */
  readonly users?: MemoryUserPool;

  constructor(scope: Construct, id: string, props: StatefulStackProps) {
    super(scope, id, props);
    const n = names(props.stage);
    const removalPolicy = props.config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const sleep = SleepTimeConfigSchema.parse(props.config.sleepTime);
    this.dataKey = this.makeDataKey(props, removalPolicy);

    this.table = new Table(this, 'MemoryTable', {
      tableName: n.table,
      partitionKey: { name: TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE.ttlAttribute,
      encryption: TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: this.dataKey,
      removalPolicy,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: TABLE.gsi.name,
      partitionKey: { name: TABLE.gsi.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.gsi.sortKey, type: AttributeType.STRING },
    });

    this.bucket = new Bucket(this, 'MemoryBucket', {
      bucketName: n.bucket(this.account),
      encryption: BucketEncryption.KMS,
      encryptionKey: this.dataKey,
      // S3 asks KMS for a bucket-level key now and then instead of a data key per object.
      bucketKeyEnabled: true,
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
    // CDK's L2 writes the archival rule's ObjectSizeGreaterThan as a number where the
    // resource schema has a string; CloudFormation coerces it (the warning says so), and
    // the synth of every stage printed it.
    Validations.of(this.bucket).acknowledge({ id: 'CloudFormation-Validate::W9003', reason: 'ObjectSizeGreaterThan is written by the Bucket L2 as a number; CloudFormation coerces it to the string its schema names.' });
    NagSuppressions.addResourceSuppressions(this.bucket, [
      {
        id: 'AwsSolutions-S1',
        reason:
          "No server access logs: the bucket blocks all public access and enforces TLS, and within this app only the stage's function roles (per-prefix grants from infra/permissions.ts) and publishers uploading claim checks under claims/ use it; CloudTrail S3 data events are the audit tool where one is needed, without a second log bucket per stage.",
      },
    ]);

    const make = (key: QueueKey, def: QueueDefinition): MemoryQueue => {
      const fifo = def.fifo ? { fifo: true, contentBasedDeduplication: false } : {};
      const throughput = def.fifo ? { deduplicationScope: DeduplicationScope.QUEUE, fifoThroughputLimit: FifoThroughputLimit.PER_QUEUE } : {};
      const dlq = new Queue(this, `${def.id}Dlq`, {
        queueName: n.dlq(def),
        ...fifo,
        retentionPeriod: Duration.days(14),
        encryption: QueueEncryption.KMS,
        encryptionMasterKey: this.dataKey,
        enforceSSL: true,
      });
      const queue = new Queue(this, def.id, {
        queueName: n.queue(def),
        ...fifo,
        ...throughput,
        visibilityTimeout: Duration.seconds(def.visibilityTimeoutSeconds),
        deliveryDelay: Duration.seconds(def.delaySeconds ?? 0),
        encryption: QueueEncryption.KMS,
        encryptionMasterKey: this.dataKey,
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

    if (!props.config.auth.issuer) {
      const userPool = new UserPool(this, 'UserPool', {
        userPoolName: `reflective-memory-${props.stage}-users`,
        selfSignUpEnabled: false,
        signInAliases: { username: true },
        // Cognito's own default, stated so that it is visible (and checked by cdk-nag).
        passwordPolicy: { minLength: 8, requireLowercase: true, requireUppercase: true, requireDigits: true, requireSymbols: true },
        standardThreatProtectionMode: StandardThreatProtectionMode.NO_ENFORCEMENT,
        removalPolicy,
      });
      NagSuppressions.addResourceSuppressions(userPool, [
        {
          id: 'AwsSolutions-COG2',
          reason:
            'MFA is not required: the pool has no self sign-up, admins create every user, and clients sign in with the Cognito API (no hosted UI, no OAuth flows); a stage that needs MFA or SSO sets auth.issuer to its own OIDC issuer and this pool is not created.',
        },
        {
          id: 'AwsSolutions-COG8',
          reason:
            'The pool is not on the Plus feature plan and threat protection is off (NO_ENFORCEMENT): Plus is billed per monthly active user for threat protection, and this pool has only admin-created users, no self sign-up and no hosted UI; a stage that needs more sets auth.issuer to its own OIDC issuer.',
        },
      ]);
      const adminGroup = new UserPoolGroup(this, 'MemoryAdminGroup', {
        userPool,
        groupName: ADMIN_GROUP,
        description: "Members may act on every user's memory and write GLOBAL memory.",
      });
      // No hosted UI (no domain): clients sign in with the Cognito API, so no OAuth flows.
      const client = userPool.addClient('ApiClient', {
        generateSecret: false,
        authFlows: { userPassword: true, userSrp: true },
        disableOAuth: true,
        preventUserExistenceErrors: true,
      });
      // A retained pool keeps its memberships and its client, so it stays usable.
      adminGroup.applyRemovalPolicy(removalPolicy);
      client.applyRemovalPolicy(removalPolicy);
      this.users = { userPool, client, adminGroup };
      new CfnOutput(this, 'UserPoolId', { value: userPool.userPoolId, description: 'Cognito user pool of the memory API (create users and memory-admin members here)' });
      new CfnOutput(this, 'UserPoolClientId', { value: client.userPoolClientId, description: "App client id: the audience of the memory API's JWT authorizer" });
    }

    // What publishers need (see the README's "Publish a turn").
    new CfnOutput(this, 'TurnQueueUrl', { value: this.queues.turn.queue.queueUrl, description: 'TURN_QUEUE_URL: where agents publish turn.saved, session.closed and agent.event' });
    new CfnOutput(this, 'MemoryBucketName', { value: this.bucket.bucketName, description: 'MEMORY_BUCKET: claim checks for large turns go under claims/' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'DataKeyArn', {
      value: this.dataKey.keyArn,
      description: 'KMS key of the table, bucket and queues: publishers need kms:GenerateDataKey and kms:Decrypt on it (TurnQueue, claim checks)',
    });
  }

  /**
   * One customer managed key per stage for all of its data (docs/encryption.md says why one):
   * rotated yearly by KMS, kept or scheduled for deletion with the data it protects (never
   * deleted while retained data needs it), named `alias/reflective-memory-{stage}`. Its key
   * policy is CDK's default, which lets this account's IAM policies grant its use: the
   * stateless stack grants each function exactly the KMS actions infra/permissions.ts lists.
   * No service principal needs it: sweeps are scheduled onto the sweep function, not onto a
   * queue, and the alarms have no actions.
   */
  private makeDataKey(props: StatefulStackProps, removalPolicy: RemovalPolicy): IKey {
    const arn = props.config.dataKeyArn;
    if (arn !== undefined) {
      const parts = Arn.split(arn, ArnFormat.SLASH_RESOURCE_NAME);
      if (parts.service !== 'kms' || parts.resource !== 'key' || !parts.resourceName) {
        throw new Error(`stage ${props.stage}: dataKeyArn must be a KMS key ARN (arn:<partition>:kms:<region>:<account>:key/<id>), not an alias: ${arn}`);
      }
      if (!Token.isUnresolved(this.region) && parts.region !== this.region) {
        throw new Error(`stage ${props.stage}: dataKeyArn is in ${parts.region}, the stack in ${this.region}`);
      }
      return Key.fromKeyArn(this, 'DataKey', arn);
    }
    const key = new Key(this, 'DataKey', {
      description: `reflective-memory ${props.stage}: table, bucket, queues and DLQs`,
      enableKeyRotation: true,
      removalPolicy,
      // Deleting a stage without retained data schedules its key's deletion after the
      // shortest wait KMS allows; a retained key is never scheduled.
      pendingWindow: Duration.days(7),
    });
    // The alias stays with a retained key, so retained data still names its key.
    key.addAlias(`alias/reflective-memory-${props.stage}`).applyRemovalPolicy(removalPolicy);
    return key;
  }
}
