import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app.js';

let stateful: Template;
let stateless: Template;

beforeAll(() => {
  // Skip esbuild bundling in tests; `npx cdk synth` bundles for real.
  const app = new App({ context: { stage: 'check', 'aws:cdk:bundling-stacks': [] } });
  const stacks = buildApp(app);
  stateful = Template.fromStack(stacks.stateful);
  stateless = Template.fromStack(stacks.stateless);
});

const policiesOf = (template: Template, functionLogicalPrefix: string): string => {
  const policies = template.findResources('AWS::IAM::Policy');
  return JSON.stringify(Object.entries(policies).filter(([id]) => id.startsWith(functionLogicalPrefix)).map(([, p]) => p));
};

describe('stateful stack', () => {
  it('has one on-demand table with PITR, a TTL attribute and a GSI', () => {
    stateful.resourceCountIs('AWS::DynamoDB::Table', 1);
    stateful.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: 'reflective-memory-check',
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: 'gsi1' })],
      SSESpecification: { SSEEnabled: true },
    });
  });

  it('has one encrypted bucket with public access blocked and SSL enforced', () => {
    stateful.resourceCountIs('AWS::S3::Bucket', 1);
    stateful.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
    });
    stateful.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  it('has FIFO TurnQueue and ReflectionQueue and an IdleQueue, each with a DLQ and alarms', () => {
    for (const [name, fifo, maxReceiveCount] of [
      ['TurnQueue', true, 5],
      ['ReflectionQueue', true, 2],
      ['IdleQueue', false, 5],
    ] as const) {
      stateful.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: `reflective-memory-check-${name}${fifo ? '.fifo' : ''}`,
        ...(fifo ? { FifoQueue: true } : {}),
        RedrivePolicy: { deadLetterTargetArn: Match.anyValue(), maxReceiveCount },
        SqsManagedSseEnabled: true,
      });
      stateful.hasResourceProperties('AWS::SQS::Queue', { QueueName: `reflective-memory-check-${name}-dlq${fifo ? '.fifo' : ''}` });
    }
    stateful.hasResourceProperties('AWS::SQS::Queue', { QueueName: 'reflective-memory-check-IdleQueue', DelaySeconds: 300 });
    stateful.resourceCountIs('AWS::SQS::Queue', 6);
    stateful.resourceCountIs('AWS::CloudWatch::Alarm', 6);
    stateful.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1 });
  });

  it('outputs what publishers need', () => {
    expect(Object.keys(stateful.findOutputs('*')).sort()).toEqual(expect.arrayContaining(['MemoryBucketName', 'TableName', 'TurnQueueUrl']));
  });
});

describe('stateless stack', () => {
  it('runs every function on Node.js 22, ARM64, with tracing', () => {
    const fns = stateless.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x', Architectures: ['arm64'], TracingConfig: { Mode: 'Active' } } });
    expect(Object.keys(fns).filter((id) => /^(Signal|Reflector|Idle|Sweep)Function/.test(id))).toHaveLength(4);
  });

  it('wires the three queues to their functions with partial batch responses', () => {
    const mappings = Object.values(stateless.findResources('AWS::Lambda::EventSourceMapping'));
    expect(mappings).toHaveLength(3);
    for (const m of mappings) expect(m.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });

  it('fires the three sweeps on their schedules, passing the schedule time', () => {
    for (const [sweep, cron] of [
      ['nightly', 'cron(0 3 * * ? *)'],
      ['weekly', 'cron(0 4 ? * SUN *)'],
      ['expiry', 'cron(30 2 * * ? *)'],
    ]) {
      stateless.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: cron,
        Targets: [Match.objectLike({ InputTransformer: Match.objectLike({ InputPathsMap: { time: '$.time' }, InputTemplate: `{"sweep":"${sweep}","time":<time>}` }) })],
      });
    }
    stateless.resourceCountIs('AWS::Events::Rule', 3);
  });

  it('archives turn originals by lifecycle rule (tagged, over 128 KiB, to Glacier Instant Retrieval after 30 days)', () => {
    stateful.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({
            Id: 'ArchiveTurns',
            TagFilters: [{ Key: 'kind', Value: 'turn' }],
            ObjectSizeGreaterThan: 131072,
            Transitions: [{ StorageClass: 'GLACIER_IR', TransitionInDays: 30 }],
          }),
        ]),
      },
    });
  });

  it('grants each function only what it uses', () => {
    const signal = policiesOf(stateless, 'SignalFunction');
    const reflector = policiesOf(stateless, 'ReflectorFunction');
    const sweep = policiesOf(stateless, 'SweepFunction');
    const idle = policiesOf(stateless, 'IdleFunction');
    expect(idle).toContain('sqs:SendMessage');
    expect(idle).not.toContain('s3:GetObject');
    expect(idle).not.toContain('bedrock:');
    expect(signal).toContain('claims/*');
    expect(signal).toContain('sqs:SendMessage');
    expect(signal).toContain('users/*/turns/*');
    expect(signal).not.toContain('bedrock:');
    expect(signal).not.toContain('dynamodb:Scan');
    expect(signal).not.toContain('s3:DeleteObject');
    expect(reflector).toContain('bedrock:InvokeModel');
    expect(reflector).toContain('users/*/Knowledge_staging/*');
    expect(reflector).not.toContain('sqs:SendMessage');
    expect(reflector).not.toContain('dynamodb:Scan');
    expect(sweep).toContain('dynamodb:Query');
    expect(sweep).toContain('users/*/Knowledge_staging/*');
    expect(sweep).not.toContain('dynamodb:PutItem');
    expect(sweep).not.toContain('bedrock:');
  });
});
