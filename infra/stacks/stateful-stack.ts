import {
  Arn,
  ArnFormat,
  CfnOutput,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
  Token,
  Validations,
} from 'aws-cdk-lib';
import { StandardThreatProtectionMode, UserPool, type UserPoolClient, UserPoolGroup } from 'aws-cdk-lib/aws-cognito';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership, StorageClass } from 'aws-cdk-lib/aws-s3';
import { ADMIN_GROUP } from '../../lib/memory-api/access.js';
import { SleepTimeConfigSchema } from '../../lib/sleep-time/config.js';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { NagSuppressions } from 'cdk-nag';
import type { Construct } from 'constructs';
import type { StageConfig } from '../config/stages.js';
import { type MemoryQueue, memoryQueue } from '../constructs/memory-queues.js';
import { BUCKET_NAME_MAX_LENGTH, names, QUEUES, type QueueKey, TABLE } from '../resources.js';

export interface StatefulStackProps extends StackProps {
  stage: string;
  config: StageConfig;
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
  /**
   * Every alarm of the stage (both stacks) notifies this topic, on ALARM and on OK. Encrypted
   * with the data key when the stack creates it, else with a key of its own (`makeAlarmTopic`).
   */
  readonly alarmTopic: Topic;
  /** Set only when `config.auth.issuer` is not: then the memory API trusts this pool. */
  readonly users?: MemoryUserPool;

  constructor(scope: Construct, id: string, props: StatefulStackProps) {
    super(scope, id, props);
    const removalPolicy = props.config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    this.dataKey = this.makeDataKey(props, removalPolicy);
    this.alarmTopic = this.makeAlarmTopic(props);
    this.table = this.makeTable(props, removalPolicy);
    this.bucket = this.makeBucket(props, removalPolicy);
    const queueProps = { stage: props.stage, config: props.config, dataKey: this.dataKey, alarmTopic: this.alarmTopic };
    this.queues = {
      turn: memoryQueue(this, queueProps, 'turn', QUEUES.turn),
      job: memoryQueue(this, queueProps, 'job', QUEUES.job),
      idle: memoryQueue(this, queueProps, 'idle', QUEUES.idle),
    };
    if (!props.config.auth.issuer) this.users = this.makeUserPool(props, removalPolicy);
    this.outputs();
  }

  /** The memory table: on-demand, point-in-time recovery, TTL, the data key, and its one GSI. */
  private makeTable(props: StatefulStackProps, removalPolicy: RemovalPolicy): Table {
    const table = new Table(this, 'MemoryTable', {
      tableName: names(props.stage).table,
      partitionKey: { name: TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE.ttlAttribute,
      encryption: TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: this.dataKey,
      removalPolicy,
    });
    table.addGlobalSecondaryIndex({
      indexName: TABLE.gsi.name,
      partitionKey: { name: TABLE.gsi.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.gsi.sortKey, type: AttributeType.STRING },
    });
    return table;
  }

  /**
   * The bucket's name, with the account and Region (infra/resources.ts). With both known (what
   * `cdk deploy` synthesizes) a name over S3's 63 characters fails the synth, naming the stage;
   * synthesized Region-agnostic, S3 would refuse it at deploy.
   */
  private bucketName(stage: string): string {
    const name = names(stage).bucket(this.account, this.region);
    if (!Token.isUnresolved(name) && name.length > BUCKET_NAME_MAX_LENGTH) {
      throw new Error(
        `the bucket name ${name} is ${name.length} characters, over S3's ${BUCKET_NAME_MAX_LENGTH}: use a stage name ${name.length - BUCKET_NAME_MAX_LENGTH} characters shorter`,
      );
    }
    return name;
  }

  /**
   * The memory bucket: the data key with a bucket key, no public access, TLS only, versioned,
   * claim checks expiring, large turn originals archived.
   */
  private makeBucket(props: StatefulStackProps, removalPolicy: RemovalPolicy): Bucket {
    const sleep = SleepTimeConfigSchema.parse(props.config.sleepTime);
    const bucket = new Bucket(this, 'MemoryBucket', {
      bucketName: this.bucketName(props.stage),
      encryption: BucketEncryption.KMS,
      encryptionKey: this.dataKey,
      // S3 asks KMS for a bucket-level key now and then instead of a data key per object.
      bucketKeyEnabled: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      versioned: true,
      lifecycleRules: [
        // A DELETE (a promoted or expired staged document, a pruned fact, a retired index version) leaves a
        // delete marker and the object as a noncurrent version, kept 30 days; then the marker, alone, is an
        // "expired object delete marker", removed by ExpiredObjectDeleteMarker
        // (https://docs.aws.amazon.com/AmazonS3/latest/userguide/ManagingDelMarkers.html).
        { noncurrentVersionExpiration: Duration.days(30), expiredObjectDeleteMarker: true },
        // Claim checks are read once by the signal function, which stores the turn itself.
        { prefix: 'claims/', expiration: Duration.days(14) },
        // A sleep-time batch inference job's files (input, manifest, output, markers): its runs have their
        // answers once it ends, which is within days (lib/batch-inference); the sweep lists what is left.
        { prefix: 'batch-inference/', expiration: Duration.days(14) },
        // Req R-ARC-1, turn archival: originals (tagged kind=turn) move to Glacier Instant
        // Retrieval — same GetObject, still retrievable — while the turn index keeps a summary.
        // Only originals over 128 KiB: below that S3 bills cold classes as 128 KiB, so moving
        // a 2 KiB turn would cost more than keeping it.
        {
          id: 'ArchiveTurns',
          tagFilters: { kind: 'turn' },
          objectSizeGreaterThan: 128 * 1024,
          transitions: [
            {
              storageClass: StorageClass.GLACIER_INSTANT_RETRIEVAL,
              transitionAfter: Duration.days(sleep.turnArchiveDays),
            },
          ],
        },
      ],
      removalPolicy,
      autoDeleteObjects: !props.config.retainData,
    });
    // CDK's L2 writes the archival rule's ObjectSizeGreaterThan as a number where the
    // resource schema has a string; CloudFormation coerces it (the warning says so), and
    // the synth of every stage printed it.
    Validations.of(bucket).acknowledge({
      id: 'CloudFormation-Validate::W9003',
      reason:
        'ObjectSizeGreaterThan is written by the Bucket L2 as a number; CloudFormation coerces it to the string its schema names.',
    });
    NagSuppressions.addResourceSuppressions(bucket, [
      {
        id: 'AwsSolutions-S1',
        reason:
          "No server access logs: the bucket blocks all public access and enforces TLS, and within this app only the stage's function roles (per-prefix grants from infra/permissions.ts) and publishers uploading claim checks under claims/ use it; CloudTrail S3 data events are the audit tool where one is needed, without a second log bucket per stage.",
      },
    ]);
    return bucket;
  }

  /** The Cognito pool, its admin group and its API client, for a stage without an OIDC issuer of its own. */
  private makeUserPool(props: StatefulStackProps, removalPolicy: RemovalPolicy): MemoryUserPool {
    const userPool = new UserPool(this, 'UserPool', {
      userPoolName: `reflective-memory-${props.stage}-users`,
      selfSignUpEnabled: false,
      signInAliases: { username: true },
      // Cognito's own default, stated so that it is visible (and checked by cdk-nag).
      passwordPolicy: {
        minLength: 8,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
      },
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
    new CfnOutput(this, 'UserPoolId', {
      value: userPool.userPoolId,
      description: 'Cognito user pool of the memory API (create users and memory-admin members here)',
    });
    new CfnOutput(this, 'UserPoolClientId', {
      value: client.userPoolClientId,
      description: "App client id: the audience of the memory API's JWT authorizer",
    });
    return { userPool, client, adminGroup };
  }

  /** The stack's outputs: what publishers and operators need. */
  private outputs(): void {
    // What publishers need (see the README's "Publish a turn").
    new CfnOutput(this, 'TurnQueueUrl', {
      value: this.queues.turn.queue.queueUrl,
      description: 'TURN_QUEUE_URL: where agents publish turn.saved, session.closed and agent.event',
    });
    new CfnOutput(this, 'MemoryBucketName', {
      value: this.bucket.bucketName,
      description: 'MEMORY_BUCKET: claim checks for large turns go under claims/',
    });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'DataKeyArn', {
      value: this.dataKey.keyArn,
      description:
        'KMS key of the table, bucket and queues: publishers need kms:GenerateDataKey and kms:Decrypt on it (TurnQueue, claim checks)',
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.alarmTopic.topicArn,
      description:
        "SNS topic every alarm of the stage notifies (ALARM and OK): subscribe on-call's e-mail, chat or pager here",
    });
  }

  /**
   * The stage's alarm topic. SNS encrypts it at rest (cdk-nag AwsSolutions-SNS2) and refuses
   * publishes without TLS (AwsSolutions-SNS3, `enforceSSL`). CloudWatch alarms publish to it as
   * the service principal cloudwatch.amazonaws.com, which needs two permissions:
   * - sns:Publish in the topic policy. The `enforceSSL` statement makes the topic carry a policy
   *   of its own, which replaces SNS's default policy, so the alarms need an explicit statement
   *   (https://repost.aws/knowledge-center/cloudwatch-receive-sns-for-alarm-trigger).
   * - kms:GenerateDataKey* and kms:Decrypt on the topic's key, in the key policy: an AWS service
   *   publishing to an encrypted topic needs a customer managed key whose policy names it
   *   (https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services,
   *   https://repost.aws/knowledge-center/cloudwatch-configure-alarm-sns).
   * Both statements are limited to alarms of this account and region (aws:SourceAccount,
   * aws:SourceArn), as that SNS page advises against the confused deputy.
   *
   * The key: the data key when the stack creates it (makeDataKey adds the statement). A key the
   * stage brings (`dataKeyArn`) is not the stack's to change, and CDK silently adds nothing to
   * an imported key's policy; rather than alarms that deploy cleanly and never arrive until its
   * owner edits that policy, the topic then gets a key of its own (≈ $1 a month). It holds only
   * alarm notifications: alarm names, states, thresholds, no user memory.
   */
  private makeAlarmTopic(props: StatefulStackProps): Topic {
    const key = props.config.dataKeyArn === undefined ? this.dataKey : this.makeAlarmTopicKey(props);
    const topic = new Topic(this, 'AlarmTopic', {
      topicName: `reflective-memory-${props.stage}-alarms`,
      displayName: `reflective-memory ${props.stage} alarms`,
      masterKey: key,
      enforceSSL: true,
    });
    topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowCloudWatchAlarmsToPublish',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: this.fromOwnAlarms(),
      }),
    );
    if (props.config.alarmEmail !== undefined) topic.addSubscription(new EmailSubscription(props.config.alarmEmail));
    return topic;
  }

  /** A key for the alarm topic alone, for a stage that brings its own data key. */
  private makeAlarmTopicKey(props: StatefulStackProps): Key {
    const key = new Key(this, 'AlarmTopicKey', {
      description: `reflective-memory ${props.stage}: the alarm topic (the stage brings its own data key)`,
      enableKeyRotation: true,
      // Alarm notifications are not kept data: the key goes with the stack.
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    key.addToResourcePolicy(this.alarmsMayUseKey());
    return key;
  }

  /** The key-policy statement that lets CloudWatch alarms of this account and region publish to a topic the key encrypts. */
  private alarmsMayUseKey(): PolicyStatement {
    return new PolicyStatement({
      sid: 'AllowCloudWatchAlarmsToPublishToTheEncryptedAlarmTopic',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: this.fromOwnAlarms(),
    });
  }

  /** Conditions that limit a service-principal statement to CloudWatch alarms of this account and region. */
  private fromOwnAlarms(): Record<string, Record<string, string>> {
    return {
      StringEquals: { 'aws:SourceAccount': this.account },
      ArnLike: { 'aws:SourceArn': `arn:${this.partition}:cloudwatch:${this.region}:${this.account}:alarm:*` },
    };
  }

  /**
   * One customer managed key per stage for all of its data (docs/encryption.md says why one):
   * rotated yearly by KMS, kept or scheduled for deletion with the data it protects (never
   * deleted while retained data needs it), named `alias/reflective-memory-{stage}`. Its key
   * policy is CDK's default, which lets this account's IAM policies grant its use: the
   * stateless stack grants each function exactly the KMS actions infra/permissions.ts lists.
   * One service principal is added: CloudWatch alarms, to publish to the encrypted alarm topic
   * (makeAlarmTopic). Sweeps are scheduled onto the sweep function, not onto a queue; their
   * target's DLQ uses SQS-managed encryption (infra/constructs/sweep-schedules.ts).
   */
  private makeDataKey(props: StatefulStackProps, removalPolicy: RemovalPolicy): IKey {
    const arn = props.config.dataKeyArn;
    if (arn !== undefined) {
      const parts = Arn.split(arn, ArnFormat.SLASH_RESOURCE_NAME);
      if (parts.service !== 'kms' || parts.resource !== 'key' || !parts.resourceName) {
        throw new Error(
          `stage ${props.stage}: dataKeyArn must be a KMS key ARN (arn:<partition>:kms:<region>:<account>:key/<id>), not an alias: ${arn}`,
        );
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
    // The alarm topic is encrypted with this key (makeAlarmTopic).
    key.addToResourcePolicy(this.alarmsMayUseKey());
    return key;
  }
}
