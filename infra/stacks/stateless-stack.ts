import { fileURLToPath } from 'node:url';
import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { EventField, Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import type { StageConfig } from '../config/stages.js';
import { MemoryFunction } from '../constructs/memory-function.js';
import { FUNCTION_TIMEOUT_SECONDS, QUEUES, type QueueKey, SWEEPS } from '../resources.js';
import type { MemoryQueue } from './stateful-stack.js';

export interface StatelessStackProps extends StackProps {
  stage: string;
  config: StageConfig;
  table: Table;
  bucket: Bucket;
  queues: Record<QueueKey, MemoryQueue>;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const entry = (name: string) => `${ROOT}functions/${name}/handler.ts`;

/** Functions, their event sources, grants and schedules. */
export class StatelessStack extends Stack {
  readonly signalFn: MemoryFunction;
  readonly reflectorFn: MemoryFunction;
  readonly idleFn: MemoryFunction;
  readonly sweepFn: MemoryFunction;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);
    const { table, bucket, queues, config } = props;
    const common = {
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      POWERTOOLS_LOG_LEVEL: config.logLevel,
    };

    this.signalFn = new MemoryFunction(this, 'SignalFunction', {
      entry: entry('signal'),
      projectRoot: ROOT,
      description: 'TurnQueue → turn documents and index → signal state → reflection jobs',
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS.signal,
      memorySize: config.memoryMb.signal,
      environment: {
        ...common,
        POWERTOOLS_SERVICE_NAME: 'signal',
        REFLECTION_QUEUE_URL: queues.reflection.queue.queueUrl,
        IDLE_QUEUE_URL: queues.idle.queue.queueUrl,
        SIGNAL_CONFIG: JSON.stringify(config.signals),
      },
    });
    this.signalFn.addEventSource(new SqsEventSource(queues.turn.queue, { batchSize: 10, reportBatchItemFailures: true }));
    table.grant(this.signalFn, 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem');
    bucket.grantPut(this.signalFn, 'users/*/turns/*');
    bucket.grantPut(this.signalFn, 'rejected/*');
    bucket.grantRead(this.signalFn, 'claims/*');
    queues.reflection.queue.grantSendMessages(this.signalFn);
    queues.idle.queue.grantSendMessages(this.signalFn);

    this.idleFn = new MemoryFunction(this, 'IdleFunction', {
      entry: entry('idle'),
      projectRoot: ROOT,
      description: 'IdleQueue (delayed idle checks) → idle-summary reflection jobs',
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS.idle,
      memorySize: config.memoryMb.idle,
      environment: {
        ...common,
        POWERTOOLS_SERVICE_NAME: 'idle',
        REFLECTION_QUEUE_URL: queues.reflection.queue.queueUrl,
        SIGNAL_CONFIG: JSON.stringify(config.signals),
      },
    });
    this.idleFn.addEventSource(new SqsEventSource(queues.idle.queue, { batchSize: 10, reportBatchItemFailures: true }));
    table.grant(this.idleFn, 'dynamodb:GetItem', 'dynamodb:PutItem');
    bucket.grantPut(this.idleFn, 'rejected/*');
    queues.reflection.queue.grantSendMessages(this.idleFn);

    this.reflectorFn = new MemoryFunction(this, 'ReflectorFunction', {
      entry: entry('reflector'),
      projectRoot: ROOT,
      description: 'ReflectionQueue → assemble → Bedrock Converse → gates → staging → batch log',
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS.reflector,
      memorySize: config.memoryMb.reflector,
      environment: {
        ...common,
        POWERTOOLS_SERVICE_NAME: 'reflector',
        MODEL_ID: config.modelId,
        REFLECTION_MAX_RECEIVES: String(QUEUES.reflection.maxReceiveCount),
        SUMMARIES_ENABLED: String(config.summaries.enabled),
        SUMMARY_PROMPT: config.summaries.prompt,
        SUMMARY_MAX_TOKENS: String(config.summaries.maxTokens),
        SLEEP_TIME_CONFIG: JSON.stringify(config.sleepTime),
      },
    });
    this.reflectorFn.addEventSource(new SqsEventSource(queues.reflection.queue, { batchSize: 1, reportBatchItemFailures: true }));
    table.grant(this.reflectorFn, 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:UpdateItem');
    bucket.grantRead(this.reflectorFn, 'users/*');
    bucket.grantPut(this.reflectorFn, 'users/*/Knowledge_staging/*');
    bucket.grantDelete(this.reflectorFn, 'users/*/Knowledge_staging/*');
    bucket.grantPut(this.reflectorFn, 'users/*/Knowledge/*');
    bucket.grantPut(this.reflectorFn, 'users/*/index/*');
    bucket.grantPut(this.reflectorFn, 'users/*/reflections/*');
    bucket.grantPut(this.reflectorFn, 'users/*/Logs/*');
    bucket.grantPut(this.reflectorFn, 'rejected/*');
    this.reflectorFn.addToRolePolicy(
      new PolicyStatement({
        actions: ['bedrock:InvokeModel'],
        resources: [
          `arn:${this.partition}:bedrock:*::foundation-model/*`,
          `arn:${this.partition}:bedrock:${this.region}:${this.account}:inference-profile/${config.modelId}`,
        ],
      }),
    );

    this.sweepFn = new MemoryFunction(this, 'SweepFunction', {
      entry: entry('sweep'),
      projectRoot: ROOT,
      description: 'Scheduled sweeps: nightly and weekly reflection fan-out, staged-item expiry',
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS.sweep,
      memorySize: config.memoryMb.sweep,
      environment: {
        ...common,
        POWERTOOLS_SERVICE_NAME: 'sweep',
        REFLECTION_QUEUE_URL: queues.reflection.queue.queueUrl,
        SLEEP_TIME_CONFIG: JSON.stringify(config.sleepTime),
      },
    });
    table.grant(this.sweepFn, 'dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:DeleteItem');
    bucket.grantDelete(this.sweepFn, 'users/*/Knowledge_staging/*');
    bucket.grantPut(this.sweepFn, 'users/*/Logs/expiry/*');
    queues.reflection.queue.grantSendMessages(this.sweepFn);
    for (const sweep of SWEEPS) {
      const name = sweep.charAt(0).toUpperCase() + sweep.slice(1);
      new Rule(this, `${name}Schedule`, {
        description: `${sweep} sweep`,
        schedule: Schedule.expression(config.schedules[sweep]),
        // The schedule's own time travels with it: the sweep's "now" is never the wall clock.
        targets: [new LambdaFunction(this.sweepFn, { event: RuleTargetInput.fromObject({ sweep, time: EventField.time }), retryAttempts: 2 })],
      });
    }
  }
}
