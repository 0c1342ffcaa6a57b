import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp, buildStacks } from '../../infra/app.js';
import { type StageConfig, stageConfig } from '../../infra/config/stages.js';
import { type FunctionKey, type KmsService, PERMISSIONS } from '../../infra/permissions.js';
import { RUNTIME_VARIABLES } from '../../infra/function-environment.js';
import { ApiEnvSchema } from '../../functions/api/env.js';
import { IdleEnvSchema } from '../../functions/idle/env.js';
import { ReflectorEnvSchema } from '../../functions/reflector/env.js';
import { SignalEnvSchema } from '../../functions/signal/env.js';
import { SweepEnvSchema } from '../../functions/sweep/env.js';
import { parseEnv } from '../../lib/kernel/config.adapter.js';
import { QUEUES } from '../../infra/resources.js';
import { STALE_INDEX_WARNING } from '../../lib/search/search-api.js';

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
  return JSON.stringify(
    Object.entries(policies)
      .filter(([id]) => id.startsWith(functionLogicalPrefix))
      .map(([, p]) => p),
  );
};

interface Statement {
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
  Sid?: string;
}
const statementsOf = (template: Template, functionLogicalPrefix: string): Statement[] =>
  Object.entries(template.findResources('AWS::IAM::Policy'))
    .filter(([id]) => id.startsWith(functionLogicalPrefix))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Statement[]);
const actionsOf = (s: Statement): string[] => (Array.isArray(s.Action) ? s.Action : [s.Action]);
/**
 * The service a KMS statement is limited to: `dynamodb` from the condition
 * kms:ViaService = `dynamodb.${AWS::Region}.amazonaws.com`; undefined when it has no such condition.
 */
const viaServiceOf = (s: Statement): string | undefined => {
  const condition = s.Condition as { StringEquals?: Record<string, unknown> } | undefined;
  const via = condition?.StringEquals?.['kms:ViaService'] as { 'Fn::Join': [string, unknown[]] } | undefined;
  if (!via || Object.keys(condition!).length !== 1 || Object.keys(condition!.StringEquals!).length !== 1)
    return undefined;
  const [head, region, tail] = via['Fn::Join'][1];
  return JSON.stringify(region) === JSON.stringify({ Ref: 'AWS::Region' }) && tail === '.amazonaws.com'
    ? String(head).replace(/\.$/, '')
    : undefined;
};

/** The logical id of the stage's data key (the one AWS::KMS::Key of the stateful stack). */
const dataKeyId = (template: Template): string => {
  const keys = Object.keys(template.findResources('AWS::KMS::Key'));
  expect(keys).toHaveLength(1);
  return keys[0]!;
};
const dataKeyArn = (template: Template) => ({ 'Fn::GetAtt': [dataKeyId(template), 'Arn'] });

/** The conditions that limit the CloudWatch service principal to alarms of the stack's own account and region. */
const fromOwnAlarms = {
  StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
  ArnLike: {
    'aws:SourceArn': {
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':cloudwatch:',
          { Ref: 'AWS::Region' },
          ':',
          { Ref: 'AWS::AccountId' },
          ':alarm:*',
        ],
      ],
    },
  },
};
/** The key-policy statement CloudWatch alarms need to publish to a topic encrypted with the key. */
const cloudWatchMayUseKey = {
  Sid: 'AllowCloudWatchAlarmsToPublishToTheEncryptedAlarmTopic',
  Effect: 'Allow',
  Principal: { Service: 'cloudwatch.amazonaws.com' },
  Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
  Resource: '*',
  Condition: fromOwnAlarms,
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
    });
  });

  it('has one bucket with public access blocked', () => {
    stateful.resourceCountIs('AWS::S3::Bucket', 1);
    stateful.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
    });
  });

  it('has FIFO TurnQueue and ReflectionQueue and an IdleQueue, each with a DLQ and alarms', () => {
    for (const [name, fifo, maxReceiveCount] of [
      ['TurnQueue', true, 5],
      ['ReflectionQueue', true, 5],
      ['IdleQueue', false, 5],
    ] as const) {
      stateful.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: `reflective-memory-check-${name}${fifo ? '.fifo' : ''}`,
        ...(fifo ? { FifoQueue: true } : {}),
        RedrivePolicy: { deadLetterTargetArn: Match.anyValue(), maxReceiveCount },
      });
      stateful.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: `reflective-memory-check-${name}-dlq${fifo ? '.fifo' : ''}`,
      });
    }
    stateful.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: 'reflective-memory-check-IdleQueue',
      DelaySeconds: 300,
    });
    stateful.resourceCountIs('AWS::SQS::Queue', 6);
    // Per queue: DLQ depth and age of the oldest message (no depth alarm: a draining queue needs no one).
    stateful.resourceCountIs('AWS::CloudWatch::Alarm', 6);
    stateful.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 1,
    });
  });

  it('runs every FIFO queue and FIFO DLQ in high-throughput mode, and leaves the standard queues alone', () => {
    const queues = Object.values(stateful.findResources('AWS::SQS::Queue')).map((q) => q.Properties);
    const fifo = queues.filter((q) => q.FifoQueue === true);
    expect(fifo.map((q) => q.QueueName).sort()).toEqual([
      'reflective-memory-check-ReflectionQueue-dlq.fifo',
      'reflective-memory-check-ReflectionQueue.fifo',
      'reflective-memory-check-TurnQueue-dlq.fifo',
      'reflective-memory-check-TurnQueue.fifo',
    ]);
    for (const q of fifo) {
      expect(
        { scope: q.DeduplicationScope, limit: q.FifoThroughputLimit, contentBased: q.ContentBasedDeduplication },
        q.QueueName,
      ).toEqual({
        scope: 'messageGroup',
        limit: 'perMessageGroupId',
        contentBased: false,
      });
    }
    for (const q of queues.filter((q) => q.FifoQueue !== true)) {
      expect([q.DeduplicationScope, q.FifoThroughputLimit], q.QueueName).toEqual([undefined, undefined]);
    }
  });

  it('outputs what publishers need', () => {
    expect(Object.keys(stateful.findOutputs('*')).sort()).toEqual(
      expect.arrayContaining(['MemoryBucketName', 'TableName', 'TurnQueueUrl']),
    );
  });

  it('has a Cognito user pool without self sign-up, a memory-admin group and a secretless app client', () => {
    stateful.resourceCountIs('AWS::Cognito::UserPool', 1);
    stateful.hasResourceProperties('AWS::Cognito::UserPool', {
      UserPoolName: 'reflective-memory-check-users',
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      UserPoolAddOns: { AdvancedSecurityMode: 'OFF' },
      Policies: {
        PasswordPolicy: {
          MinimumLength: 8,
          RequireLowercase: true,
          RequireUppercase: true,
          RequireNumbers: true,
          RequireSymbols: true,
        },
      },
    });
    stateful.hasResource('AWS::Cognito::UserPool', { DeletionPolicy: 'Delete' });
    const prod = buildApp(new App({ context: { stage: 'prod', 'aws:cdk:bundling-stacks': [] } }));
    Template.fromStack(prod.stateful).hasResource('AWS::Cognito::UserPool', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
    stateful.hasResourceProperties('AWS::Cognito::UserPoolGroup', {
      GroupName: 'memory-admin',
      Description: Match.stringLikeRegexp('GLOBAL'),
    });
    stateful.hasResourceProperties('AWS::Cognito::UserPoolClient', {
      GenerateSecret: false,
      ExplicitAuthFlows: Match.arrayWith(['ALLOW_USER_PASSWORD_AUTH', 'ALLOW_USER_SRP_AUTH']),
    });
    expect(Object.keys(stateful.findOutputs('*'))).toEqual(expect.arrayContaining(['UserPoolId', 'UserPoolClientId']));
  });
});

describe('encryption at rest and in transit', () => {
  it('has one customer managed key per stage: rotated, with a per-stage alias, the default key policy and the alarm topic statement', () => {
    stateful.resourceCountIs('AWS::KMS::Key', 1);
    stateful.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: [
          // The account itself: IAM policies grant use (the function roles, from infra/permissions.ts).
          {
            Effect: 'Allow',
            Action: 'kms:*',
            Principal: {
              AWS: {
                'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']],
              },
            },
            Resource: '*',
          },
          // CloudWatch alarms of this account and region, to publish to the encrypted alarm topic.
          cloudWatchMayUseKey,
        ],
        Version: '2012-10-17',
      },
    });
    stateful.resourceCountIs('AWS::KMS::Alias', 1);
    stateful.hasResourceProperties('AWS::KMS::Alias', {
      AliasName: 'alias/reflective-memory-check',
      TargetKeyId: dataKeyArn(stateful),
    });
    expect(Object.keys(stateful.findOutputs('*'))).toContain('DataKeyArn');
  });

  it('keeps or deletes the key and its alias with the data (retainData)', () => {
    stateful.hasResource('AWS::KMS::Key', {
      DeletionPolicy: 'Delete',
      UpdateReplacePolicy: 'Delete',
      Properties: Match.objectLike({ PendingWindowInDays: 7 }),
    });
    stateful.hasResource('AWS::KMS::Alias', { DeletionPolicy: 'Delete' });
    const prod = Template.fromStack(
      buildApp(new App({ context: { stage: 'prod', 'aws:cdk:bundling-stacks': [] } })).stateful,
    );
    prod.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain' });
    prod.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    prod.hasResource('AWS::KMS::Alias', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    prod.hasResourceProperties('AWS::KMS::Alias', { AliasName: 'alias/reflective-memory-prod' });
  });

  it('encrypts the table, the bucket (bucket key on) and every queue and DLQ with that key (queues reusing a data key for an hour)', () => {
    const key = dataKeyArn(stateful);
    stateful.hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: key },
    });
    stateful.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          { BucketKeyEnabled: true, ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: key } },
        ],
      },
    });
    const queues = Object.entries(stateful.findResources('AWS::SQS::Queue'));
    expect(queues).toHaveLength(6);
    for (const [id, q] of queues) {
      expect(q.Properties.KmsMasterKeyId, id).toEqual(key);
      expect(q.Properties.SqsManagedSseEnabled, id).toBeUndefined();
      // SQS asks KMS for a data key once an hour per caller, not every 5 minutes.
      expect(q.Properties.KmsDataKeyReusePeriodSeconds, id).toBe(3600);
    }
    stateful.hasResourceProperties('AWS::SNS::Topic', {
      TopicName: 'reflective-memory-check-alarms',
      KmsMasterKeyId: key,
    });
  });

  it("encrypts the sweep schedules' DLQ with SQS-managed keys, which EventBridge can send to without a key policy", () => {
    const queues = Object.values(stateless.findResources('AWS::SQS::Queue')).map((q) => q.Properties);
    expect(queues).toEqual([
      expect.objectContaining({ QueueName: 'reflective-memory-check-SweepScheduleDlq', SqsManagedSseEnabled: true }),
    ]);
    expect(queues[0]!.KmsMasterKeyId).toBeUndefined();
  });

  it('refuses requests without TLS on the bucket and on every queue and DLQ', () => {
    const denyPlainHttp = {
      Effect: 'Deny',
      Principal: { AWS: '*' },
      Condition: { Bool: { 'aws:SecureTransport': 'false' } },
    };
    stateful.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: Match.stringLikeRegexp('^MemoryBucket') },
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ ...denyPlainHttp, Action: 's3:*' })]) },
    });
    for (const template of [stateful, stateless]) {
      const policies = Object.values(template.findResources('AWS::SQS::QueuePolicy')).map((p) => p.Properties);
      const ids = Object.keys(template.findResources('AWS::SQS::Queue'));
      expect(ids.length).toBeGreaterThan(0);
      for (const id of ids) {
        const denies = policies
          .filter((p) => JSON.stringify(p.Queues) === JSON.stringify([{ Ref: id }]))
          .flatMap((p) => p.PolicyDocument.Statement)
          .filter((st) => JSON.stringify(st.Resource) === JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] }));
        expect(denies, id).toContainEqual({
          ...denyPlainHttp,
          Action: 'sqs:*',
          Resource: { 'Fn::GetAtt': [id, 'Arn'] },
        });
      }
    }
    stateful.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Principal: '*',
            Action: 'sns:Publish',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it("exposes the memory API only at API Gateway's own endpoint, which answers HTTPS only", () => {
    // An HTTP API's execute-api endpoint has no plain-HTTP listener; nothing else reaches a
    // function from outside: no function URL, no custom domain (which would need its own TLS policy).
    const [apiId] = Object.keys(stateless.findResources('AWS::ApiGatewayV2::Api'));
    expect(stateless.findOutputs('ApiUrl').ApiUrl?.Value).toEqual({ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] });
    stateless.resourceCountIs('AWS::Lambda::Url', 0);
    stateless.resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
  });
});

describe('stateless stack', () => {
  it('runs every function on Node.js 22, ARM64, traced: the API and the sweeps sampled, the queue functions only when the publisher sampled', () => {
    const traced = (mode: string) =>
      Object.keys(
        stateless.findResources('AWS::Lambda::Function', {
          Properties: { Runtime: 'nodejs22.x', Architectures: ['arm64'], TracingConfig: { Mode: mode } },
        }),
      )
        .filter((id) => /^(Signal|Reflector|Idle|Sweep|Api)Function/.test(id))
        .map((id) => id.replace(/Function.*$/, ''))
        .sort();
    expect(traced('Active')).toEqual(['Api', 'Sweep']);
    expect(traced('PassThrough')).toEqual(['Idle', 'Reflector', 'Signal']);
  });

  it('wires the three queues to their functions with partial batch responses', () => {
    const mappings = Object.entries(stateless.findResources('AWS::Lambda::EventSourceMapping'));
    expect(mappings).toHaveLength(3);
    for (const [, m] of mappings) expect(m.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    // Each function reads the queue infra/permissions.ts says it consumes.
    const wired = mappings.map(
      ([id, m]) =>
        `${id.match(/^[A-Z][a-z]+/)![0]} ${JSON.stringify(m.Properties.EventSourceArn).match(/GetAtt([A-Za-z]+Queue)/)![1]}`,
    );
    expect(wired.sort()).toEqual(['Idle IdleQueue', 'Reflector ReflectionQueue', 'Signal TurnQueue']);
    expect([
      PERMISSIONS.signal.consumes,
      PERMISSIONS.idle.consumes,
      PERMISSIONS.reflector.consumes,
      PERMISSIONS.sweep.consumes,
      PERMISSIONS.api.consumes,
    ]).toEqual(['turn', 'idle', 'job', null, null]);
  });

  it('fires the three sweeps on their schedules, passing the schedule time', () => {
    for (const [sweep, cron] of [
      ['nightly', 'cron(0 3 * * ? *)'],
      ['weekly', 'cron(0 4 ? * SUN *)'],
      ['expiry', 'cron(30 2 * * ? *)'],
    ]) {
      stateless.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: cron,
        Targets: [
          Match.objectLike({
            InputTransformer: Match.objectLike({
              InputPathsMap: { time: '$.time' },
              InputTemplate: `{"sweep":"${sweep}","time":<time>}`,
            }),
          }),
        ],
      });
    }
    // And the rule on Bedrock's batch inference job state changes (sleep-time at batch prices).
    stateless.resourceCountIs('AWS::Events::Rule', 4);
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

  it('expires noncurrent versions after 30 days and then the delete markers left alone', () => {
    stateful.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ NoncurrentVersionExpiration: { NoncurrentDays: 30 }, ExpiredObjectDeleteMarker: true }),
        ]),
      },
    });
  });

  it('grants each function exactly what infra/permissions.ts lists, and nothing wider', () => {
    const ids: Record<FunctionKey, string> = {
      signal: 'SignalFunction',
      idle: 'IdleFunction',
      reflector: 'ReflectorFunction',
      sweep: 'SweepFunction',
      api: 'ApiFunction',
    };
    const eventSourceActions = [
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ];
    /** The key pattern of an S3 object ARN: the literal tail of its Fn::Join. */
    const patternOf = (resource: unknown): string => {
      const parts = (resource as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
      return String(parts.at(-1)).replace(/^\//, '');
    };
    for (const [fn, id] of Object.entries(ids) as Array<[FunctionKey, string]>) {
      const permissions = PERMISSIONS[fn];
      const statements = statementsOf(stateless, id);
      const actions = [...new Set(statements.flatMap(actionsOf))];
      expect(actions.filter((a) => a.startsWith('dynamodb:')).sort(), fn).toEqual(
        permissions.dynamodb.map((a) => `dynamodb:${a}`).sort(),
      );
      const listing = statements.filter((st) => actionsOf(st).includes('s3:ListBucket'));
      expect(
        listing.map((st) => ({ actions: actionsOf(st), resource: st.Resource, condition: st.Condition })),
        fn,
      ).toEqual(
        permissions.listBucket
          ? [
              {
                actions: ['s3:ListBucket'],
                resource: { 'Fn::ImportValue': expect.stringMatching(/MemoryBucket.*Arn/) },
                condition: undefined,
              },
            ]
          : [],
      );
      const versions = statements.filter((st) => actionsOf(st).includes('s3:ListBucketVersions'));
      expect(
        versions.map((st) => ({ actions: actionsOf(st), resource: st.Resource })),
        fn,
      ).toEqual(
        permissions.listBucketVersions
          ? [
              {
                actions: ['s3:ListBucketVersions'],
                resource: { 'Fn::ImportValue': expect.stringMatching(/MemoryBucket.*Arn/) },
              },
            ]
          : [],
      );
      const s3 = statements
        .filter((st) =>
          actionsOf(st).some((a) => a.startsWith('s3:') && a !== 's3:ListBucket' && a !== 's3:ListBucketVersions'),
        )
        .map((st) => ({ pattern: patternOf(st.Resource), actions: actionsOf(st).sort() }))
        .sort((x, y) => x.pattern.localeCompare(y.pattern));
      const expected = Object.entries(permissions.s3)
        .map(([pattern, acts]) => ({ pattern, actions: acts.map((a) => `s3:${a}`).sort() }))
        .sort((x, y) => x.pattern.localeCompare(y.pattern));
      expect(s3, fn).toEqual(expected);
      const sends = statements.filter((st) => actionsOf(st).includes('sqs:SendMessage'));
      expect(sends.flatMap((st) => (Array.isArray(st.Resource) ? st.Resource : [st.Resource])).length, fn).toBe(
        permissions.sends.length,
      );
      expect(
        sends.every((st) => actionsOf(st).length === 1),
        fn,
      ).toBe(true);
      expect(actions.includes('bedrock:InvokeModel'), fn).toBe(permissions.model);
      const batchActions = ['bedrock:CreateModelInvocationJob', 'bedrock:GetModelInvocationJob', 'iam:PassRole'];
      expect(
        actions.filter((a) => batchActions.includes(a)),
        fn,
      ).toEqual(permissions.batchInference ? batchActions : []);
      const hasEventSource = permissions.consumes !== null;
      expect(actions.filter((a) => eventSourceActions.includes(a)).sort(), fn).toEqual(
        hasEventSource ? eventSourceActions : [],
      );
      // Logs: only writes, only to the function's own log group (no AWSLambdaBasicExecutionRole).
      const logs = statements.filter((st) => actionsOf(st).some((a) => a.startsWith('logs:')));
      expect(
        logs.map((st) => ({ actions: actionsOf(st).sort(), resource: st.Resource })),
        fn,
      ).toEqual([
        {
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resource: { 'Fn::GetAtt': [expect.stringMatching(new RegExp(`^${id}Logs`)), 'Arn'] },
        },
      ]);
      // KMS: exactly the table's actions per service, on the data key, each only through that
      // service (so no event source or grant helper adds an unconditioned kms:Decrypt).
      const kms = statements
        .filter((st) => actionsOf(st).some((a) => a.startsWith('kms:')))
        .map((st) => ({ via: viaServiceOf(st), actions: actionsOf(st).sort(), resource: st.Resource }))
        .sort((x, y) => String(x.via).localeCompare(String(y.via)));
      const expectedKms = (Object.entries(permissions.kms) as Array<[KmsService, string[]]>)
        .map(([service, acts]) => ({
          via: service,
          actions: acts.map((a) => `kms:${a}`).sort(),
          resource: { 'Fn::ImportValue': expect.stringMatching(/DataKey/) },
        }))
        .sort((x, y) => x.via.localeCompare(y.via));
      expect(kms, fn).toEqual(expectedKms);
      // Nothing beyond the table above, the event source's own actions, its logs and X-Ray.
      expect(
        actions.filter(
          (a) =>
            !/^(dynamodb:|s3:|xray:|logs:|kms:)/.test(a) &&
            a !== 'sqs:SendMessage' &&
            a !== 'bedrock:InvokeModel' &&
            !(permissions.batchInference && batchActions.includes(a)) &&
            !eventSourceActions.includes(a),
        ),
        fn,
      ).toEqual([]);
      // The table grant covers the GSI.
      if (permissions.dynamodb.includes('Query'))
        expect(JSON.stringify(statements.filter((st) => actionsOf(st).includes('dynamodb:Query'))), fn).toContain(
          '/index/*',
        );
    }
  });

  it('gives every function exactly the variables its environment schema reads (functions/<name>/env.ts), each valid', () => {
    const schemas = {
      SignalFunction: SignalEnvSchema,
      IdleFunction: IdleEnvSchema,
      ReflectorFunction: ReflectorEnvSchema,
      SweepFunction: SweepEnvSchema,
      ApiFunction: ApiEnvSchema,
    };
    const functions = stateless.findResources('AWS::Lambda::Function');
    for (const [prefix, schema] of Object.entries(schemas)) {
      const entries = Object.entries(functions).filter(([id]) => id.startsWith(prefix) && !id.includes('Role'));
      expect(entries, prefix).toHaveLength(1);
      const variables = (entries[0]![1].Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
      const read = Object.keys(schema.shape);
      expect(
        Object.keys(variables).filter(
          (k) => !read.includes(k) && !(RUNTIME_VARIABLES as readonly string[]).includes(k),
        ),
        `${prefix}: set but never read`,
      ).toEqual([]);
      const required = Object.entries(schema.shape)
        .filter(([, field]) => !field.safeParse(undefined).success)
        .map(([k]) => k);
      expect(
        required.filter((k) => !(k in variables)),
        `${prefix}: read but never set`,
      ).toEqual([]);
      // Tokens (names and URLs of the stateful stack's resources) stand for non-empty strings.
      const concrete = Object.fromEntries(
        Object.entries(variables).map(([k, v]) => [k, typeof v === 'string' ? v : 'resolved-at-deploy']),
      );
      expect(() => parseEnv(schema, concrete), prefix).not.toThrow();
    }
  });

  it('keeps the API function away from queues but the two it sends to, the model and whole-table actions', () => {
    const api = policiesOf(stateless, 'ApiFunction');
    // Its only queue action: sending what a person asks for on demand — a summary to the
    // ReflectionQueue, the agent.event of a batch reflection to the TurnQueue.
    const sqs = statementsOf(stateless, 'ApiFunction').filter((st) => actionsOf(st).some((a) => a.startsWith('sqs:')));
    expect([...new Set(sqs.flatMap(actionsOf))]).toEqual(['sqs:SendMessage']);
    expect(JSON.stringify(sqs)).toContain('ReflectionQueue');
    expect(JSON.stringify(sqs)).toContain('TurnQueue');
    expect(JSON.stringify(sqs)).not.toMatch(/IdleQueue|Dlq/);
    expect(api).not.toContain('bedrock:');
    expect(api).not.toContain('dynamodb:Scan');
    // DeleteItem it has since req R-DEL (a person deletes one staged record); no table-wide action.
    expect(api).not.toContain('dynamodb:DeleteTable');
    expect(api).not.toContain('rejected/*');
    expect(api).not.toContain('/Logs/');
  });

  it('puts an HTTP API in front of the API function, with a JWT authorizer on /v1/*', () => {
    stateless.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    stateless.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      Name: 'reflective-memory-check-api',
      ProtocolType: 'HTTP',
      CorsConfiguration: Match.objectLike({ AllowHeaders: Match.arrayWith(['Authorization', 'Content-Type']) }),
    });
    stateless.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 1);
    stateless.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: { Audience: [Match.anyValue()], Issuer: Match.anyValue() },
    });
    stateless.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: 'ANY /v1/{proxy+}',
      AuthorizationType: 'JWT',
      AuthorizerId: Match.anyValue(),
    });
    const routes = Object.values(stateless.findResources('AWS::ApiGatewayV2::Route')).map((r) => r.Properties);
    for (const key of ['GET /openapi.json', 'GET /console', 'OPTIONS /v1/{proxy+}']) {
      const route = routes.find((r) => r.RouteKey === key);
      expect(route, key).toBeDefined();
      expect(route!.AuthorizationType ?? 'NONE', key).toBe('NONE');
      expect(route!.AuthorizerId, key).toBeUndefined();
    }
    expect(routes.map((r) => r.RouteKey).sort()).toEqual([
      'ANY /v1/{proxy+}',
      'GET /console',
      'GET /openapi.json',
      'OPTIONS /v1/{proxy+}',
    ]);
    stateless.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 },
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
    });
    expect(Object.keys(stateless.findOutputs('*'))).toContain('ApiUrl');
  });

  it('trusts the Cognito pool when the stage names no issuer', () => {
    const [authorizer] = Object.values(stateless.findResources('AWS::ApiGatewayV2::Authorizer'));
    const jwt = JSON.stringify(authorizer!.Properties.JwtConfiguration);
    expect(jwt).toContain('https://');
    expect(jwt).toMatch(/UserPool.*ProviderURL/);
    expect(jwt).toMatch(/UserPoolApiClient/);
  });

  it('answers the CORS preflight of /v1/* without the authorizer, outside the memory function', () => {
    const preflight = policiesOf(stateless, 'PreflightFunction');
    expect(preflight).not.toContain('dynamodb:');
    expect(preflight).not.toContain('s3:');
    expect(statementsOf(stateless, 'PreflightFunction').flatMap(actionsOf).sort()).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
    ]);
  });

  it('gives no function role an AWS managed policy', () => {
    const roles = Object.values(stateless.findResources('AWS::IAM::Role')).filter((r) =>
      JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('lambda.amazonaws.com'),
    );
    expect(roles).toHaveLength(6);
    for (const role of roles) expect(role.Properties.ManagedPolicyArns).toBeUndefined();
  });
});

/** Both stacks of a stage whose config differs from the `dev` settings by `overrides`. */
const buildStage = (stage: string, overrides: Partial<StageConfig>, env?: { account: string; region: string }) => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const { stateful, stateless } = buildStacks(app, stage, { ...stageConfig(stage), ...overrides }, env);
  return { stateful: Template.fromStack(stateful), stateless: Template.fromStack(stateless) };
};

describe('sleep-time at batch prices', () => {
  it("gives Bedrock a role for this account's jobs, the sweep the grants to start them, and the jobs' end back", () => {
    const roles = stateless.findResources('AWS::IAM::Role', {
      Properties: {
        AssumeRolePolicyDocument: {
          Statement: [Match.objectLike({ Principal: { Service: 'bedrock.amazonaws.com' } })],
        },
      },
    });
    const [roleId, role] = Object.entries(roles)[0] ?? [];
    expect(Object.keys(roles)).toHaveLength(1);
    const trust = JSON.stringify(role?.Properties.AssumeRolePolicyDocument);
    expect(trust).toContain('aws:SourceAccount');
    expect(trust).toContain(':model-invocation-job/*');
    const roleStatements = statementsOf(stateless, 'BatchInferenceRole');
    expect(roleStatements.flatMap(actionsOf).sort()).toEqual([
      'bedrock:InvokeModel',
      'bedrock:InvokeModel',
      'kms:Decrypt',
      'kms:GenerateDataKey',
      's3:GetObject',
      's3:ListBucket',
      's3:PutObject',
    ]);
    const sweep = statementsOf(stateless, 'SweepFunction');
    const pass = sweep.find((st) => actionsOf(st).includes('iam:PassRole'));
    expect(pass?.Resource).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
    expect(pass?.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'bedrock.amazonaws.com' } });
    stateless.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.bedrock'],
        'detail-type': ['Batch Inference Job State Change'],
        detail: {
          batchJobName: [{ prefix: 'memory-check-' }],
          status: ['Completed', 'PartiallyCompleted', 'Failed', 'Stopped', 'Expired'],
        },
      },
      Targets: [Match.objectLike({ DeadLetterConfig: Match.anyValue(), RetryPolicy: Match.anyValue() })],
    });
    const sweepFn = Object.values(stateless.findResources('AWS::Lambda::Function')).find((f) =>
      JSON.stringify(f).includes('BATCH_INFERENCE'),
    );
    expect(JSON.stringify(sweepFn?.Properties.Environment.Variables.BATCH_INFERENCE)).toContain('memory-check');
  });

  it("expires a job's files after 14 days, so the sweep's look for unfinished jobs stays short", () => {
    stateful.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ Prefix: 'batch-inference/', ExpirationInDays: 14 })]),
      },
    });
  });

  it('adds none of it on a stage that has it off, and refuses limits that cannot hold', () => {
    const off = buildStage('nobatch', { sleepTimeInference: { batch: false, minRecords: 100, maxRecords: 50_000 } });
    off.stateless.resourceCountIs('AWS::Events::Rule', 3);
    expect(JSON.stringify(off.stateless.toJSON())).not.toContain('CreateModelInvocationJob');
    expect(JSON.stringify(off.stateless.toJSON())).not.toContain('BATCH_INFERENCE');
    expect(() =>
      buildStage('badbatch', { sleepTimeInference: { batch: true, minRecords: 0, maxRecords: 10 } }),
    ).toThrow('sleepTimeInference.minRecords');
    expect(() =>
      buildStage('badbatch', { sleepTimeInference: { batch: true, minRecords: 10, maxRecords: 5 } }),
    ).toThrow('sleepTimeInference.maxRecords');
    expect(() => buildStage('badbatch', { routineInference: { batch: true, minRecords: 0, maxRecords: 10 } })).toThrow(
      'routineInference.minRecords',
    );
  });

  it("with routine reflections on, starts jobs on the batches' model too and tells the reflector to keep their requests", () => {
    const on = buildStage('routine', {
      jobModels: { sleepTime: 'amazon.nova-lite-v1:0' },
      routineInference: { batch: true, minRecords: 100, maxRecords: 50_000 },
    });
    const fns = Object.values(on.stateless.findResources('AWS::Lambda::Function'));
    const env = (name: string) =>
      fns.map((f) => f.Properties.Environment?.Variables?.[name]).filter((v) => v !== undefined);
    expect(env('ROUTINE_BATCH_INFERENCE')).toHaveLength(2);
    expect(env('ROUTINE_BATCH_INFERENCE')).toContain('true');
    const settings = JSON.stringify(env('ROUTINE_BATCH_INFERENCE').find((v) => v !== 'true'));
    // The batches' model is the stage's first (its Region table has no suffix), the sleep-time model the second.
    expect(settings).toContain('{"Fn::FindInMap":["ReflectorModelByRegion",');
    expect(JSON.stringify(env('BATCH_INFERENCE'))).toContain('{"Fn::FindInMap":["ReflectorModelByRegion2",');
    const create = statementsOf(on.stateless, 'SweepFunction').find((st) =>
      actionsOf(st).includes('bedrock:CreateModelInvocationJob'),
    );
    expect(JSON.stringify(create?.Resource)).toContain('foundation-model/anthropic.claude-haiku-4-5');
    expect(JSON.stringify(create?.Resource)).toContain('foundation-model/amazon.nova-lite-v1:0');
    const invoke = statementsOf(on.stateless, 'BatchInferenceRole').filter((st) =>
      actionsOf(st).includes('bedrock:InvokeModel'),
    );
    expect(JSON.stringify(invoke)).toContain('anthropic.claude-haiku-4-5');
    expect(JSON.stringify(invoke)).toContain('amazon.nova-lite-v1:0');
  });
});

describe('stage with its own OIDC issuer', () => {
  const build = (auth: { issuer?: string; audience?: string[] }) => buildStage('oidc', { auth });

  it('creates no user pool and trusts the issuer and audience it names', () => {
    const t = build({ issuer: 'https://login.example.com/', audience: ['memory-api'] });
    t.stateful.resourceCountIs('AWS::Cognito::UserPool', 0);
    t.stateful.resourceCountIs('AWS::Cognito::UserPoolGroup', 0);
    expect(Object.keys(t.stateful.findOutputs('*'))).not.toContain('UserPoolId');
    t.stateless.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      JwtConfiguration: { Issuer: 'https://login.example.com/', Audience: ['memory-api'] },
    });
  });

  it('refuses an issuer without an audience', () => {
    expect(() => build({ issuer: 'https://login.example.com/' })).toThrow(/audience/);
  });
});

describe('stage that embeds (hybrid retrieval)', () => {
  const variablesOf = (t: Template, prefix: string): Record<string, unknown> => {
    const [fn] = Object.entries(t.findResources('AWS::Lambda::Function')).filter(
      ([id]) => id.startsWith(prefix) && !id.includes('Role'),
    );
    return (fn?.[1].Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
  };
  const embeddingStatements = (t: Template, prefix: string) =>
    statementsOf(t, prefix)
      .filter((st) => st.Sid === 'InvokeEmbeddingModel' || JSON.stringify(st.Resource).includes('titan-embed'))
      .map((st) => ({ sid: st.Sid, actions: actionsOf(st), resource: st.Resource, condition: st.Condition }));

  it('grants the reflector and the API InvokeModel on that foundation model in its Region only, and names it to them', () => {
    const t = buildStage(
      'emb',
      { embeddings: { modelId: 'amazon.titan-embed-text-v2:0', dimensions: 256 } },
      { account: '123456789012', region: 'eu-west-1' },
    );
    for (const prefix of ['ReflectorFunction', 'ApiFunction']) {
      expect(embeddingStatements(t.stateless, prefix), prefix).toEqual([
        {
          sid: 'InvokeEmbeddingModel',
          actions: ['bedrock:InvokeModel'],
          resource: {
            'Fn::Join': [
              '',
              ['arn:', { Ref: 'AWS::Partition' }, ':bedrock:eu-west-1::foundation-model/amazon.titan-embed-text-v2:0'],
            ],
          },
          condition: undefined,
        },
      ]);
      expect(variablesOf(t.stateless, prefix), prefix).toMatchObject({
        EMBEDDING_MODEL_ID: 'amazon.titan-embed-text-v2:0',
        EMBEDDING_DIMENSIONS: '256',
      });
    }
    for (const prefix of ['SignalFunction', 'IdleFunction', 'SweepFunction']) {
      expect(embeddingStatements(t.stateless, prefix), prefix).toEqual([]);
      expect(variablesOf(t.stateless, prefix), prefix).not.toHaveProperty('EMBEDDING_MODEL_ID');
    }
    expect(() =>
      parseEnv(ApiEnvSchema, {
        ...variablesOf(t.stateless, 'ApiFunction'),
        TABLE_NAME: 't',
        BUCKET_NAME: 'b',
        JOB_QUEUE_URL: 'q',
        TURN_QUEUE_URL: 'q',
      }),
    ).not.toThrow();
  });

  it('grants and names no embedding model on a stage that does not embed', () => {
    const t = buildStage('noemb', {}, { account: '123456789012', region: 'eu-west-1' });
    for (const prefix of ['ReflectorFunction', 'ApiFunction']) {
      expect(embeddingStatements(t.stateless, prefix), prefix).toEqual([]);
      expect(variablesOf(t.stateless, prefix), prefix).not.toHaveProperty('EMBEDDING_MODEL_ID');
      expect(variablesOf(t.stateless, prefix), prefix).not.toHaveProperty('EMBEDDING_DIMENSIONS');
    }
    expect(policiesOf(t.stateless, 'ApiFunction')).not.toContain('bedrock:');
  });
});

describe('stage with its own KMS key (dataKeyArn)', () => {
  const env = { account: '111122223333', region: 'eu-west-1' };
  const arn = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';

  it('creates no data key and encrypts the table, bucket, queues and DLQs with the one it names', () => {
    const t = buildStage('byok', { dataKeyArn: arn }, env);
    // The one key the stack creates is the alarm topic's (below), with no alias.
    t.stateful.resourceCountIs('AWS::KMS::Key', 1);
    t.stateful.resourceCountIs('AWS::KMS::Alias', 0);
    t.stateful.hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: arn },
    });
    t.stateful.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          { BucketKeyEnabled: true, ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: arn } },
        ],
      },
    });
    const queues = Object.values(t.stateful.findResources('AWS::SQS::Queue'));
    expect(queues).toHaveLength(6);
    for (const q of queues) expect(q.Properties.KmsMasterKeyId).toBe(arn);
    // The function grants name that key.
    const kmsResources = Object.values(t.stateless.findResources('AWS::IAM::Policy'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[])
      .filter((st) => actionsOf(st).some((a) => a.startsWith('kms:')))
      .map((st) => st.Resource);
    expect(kmsResources.length).toBeGreaterThan(0);
    for (const r of kmsResources) expect(r).toBe(arn);
  });

  it('gives the alarm topic a key of its own, whose policy lets CloudWatch alarms of the account and region publish', () => {
    const t = buildStage('byok', { dataKeyArn: arn }, env);
    const [keyId, key] = Object.entries(t.stateful.findResources('AWS::KMS::Key'))[0]!;
    expect(keyId).toMatch(/^AlarmTopicKey/);
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.Properties.KeyPolicy.Statement).toContainEqual({
      Sid: 'AllowCloudWatchAlarmsToPublishToTheEncryptedAlarmTopic',
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      Resource: '*',
      Condition: {
        StringEquals: { 'aws:SourceAccount': '111122223333' },
        ArnLike: {
          'aws:SourceArn': {
            'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:eu-west-1:111122223333:alarm:*']],
          },
        },
      },
    });
    t.stateful.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] } });
  });

  it('refuses an alias or a key in another region', () => {
    expect(() => buildStage('byok', { dataKeyArn: 'arn:aws:kms:eu-west-1:111122223333:alias/mine' }, env)).toThrow(
      /not an alias/,
    );
    expect(() => buildStage('byok', { dataKeyArn: arn.replace('eu-west-1', 'us-east-1') }, env)).toThrow(/us-east-1/);
  });
});

describe('operations: alarms, their topic, load settings', () => {
  const topicId = (template: Template): string => {
    const ids = Object.keys(template.findResources('AWS::SNS::Topic'));
    expect(ids).toHaveLength(1);
    return ids[0]!;
  };
  /** How each stack names the stateful stack's alarm topic: a Ref there, an import of its export here. */
  const topicRefIn = (template: Template, topic: string): unknown =>
    template === stateful ? { Ref: topic } : { 'Fn::ImportValue': expect.stringContaining(`Ref${topic}`) };
  const alarmsOf = (template: Template) =>
    Object.entries(template.findResources('AWS::CloudWatch::Alarm')).map(([id, a]) => ({ id, ...a.Properties }));
  const logicalIdOf = (template: Template, type: string, prefix: string): string => {
    const ids = Object.keys(template.findResources(type)).filter((id) => id.startsWith(prefix));
    expect(ids, `${type} ${prefix}`).toHaveLength(1);
    return ids[0]!;
  };
  const config = stageConfig('check');

  it('gives every alarm of both stacks the stage topic as its ALARM and OK action', () => {
    const topic = topicId(stateful);
    let count = 0;
    for (const template of [stateful, stateless]) {
      for (const alarm of alarmsOf(template)) {
        expect(alarm.AlarmActions, alarm.id).toEqual([topicRefIn(template, topic)]);
        expect(alarm.OKActions, alarm.id).toEqual([topicRefIn(template, topic)]);
        expect(alarm.InsufficientDataActions, alarm.id).toBeUndefined();
        expect(alarm.ActionsEnabled ?? true, alarm.id).toBe(true);
        count += 1;
      }
    }
    // 2 per queue, the sweep DLQ's, 2 for each of the api and the sweep, the daily model cost,
    // rejected records, a stale search index.
    expect(count).toBe(2 * 3 + 1 + 2 * 2 + 1 + 1 + 1);
  });

  it('says in every alarm the action a human takes when it fires', () => {
    for (const template of [stateful, stateless]) {
      for (const alarm of alarmsOf(template)) {
        expect(alarm.AlarmDescription, alarm.id).toContain('Action: ');
      }
    }
  });

  it('alarms at the first record rejected as malformed, by any function, on one metric per stage', () => {
    stateless.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'ReflectiveMemory',
      MetricName: 'RejectedRecords',
      Dimensions: [{ Name: 'stage', Value: 'check' }],
      Statistic: 'Sum',
      Period: 3600,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    // Each emitter is told its stage, the dimension's value (lib/kernel/metrics.adapter.ts).
    for (const name of ['Signal', 'Idle', 'Reflector']) {
      const fn =
        stateless.findResources('AWS::Lambda::Function')[
          logicalIdOf(stateless, 'AWS::Lambda::Function', `${name}Function`)
        ];
      expect(fn?.Properties.Environment.Variables.STAGE, name).toBe('check');
    }
  });

  it("alarms at the api's first log line of a search index whose watermark is older than its marks' TTL", () => {
    const filters = Object.values(stateless.findResources('AWS::Logs::MetricFilter')).map((f) => f.Properties);
    const stale = filters.find((f) => f.MetricTransformations?.[0]?.MetricName === 'StaleSearchIndex');
    expect(stale?.FilterPattern).toBe(`{ ($.message = "${STALE_INDEX_WARNING}") && ($.stage = "check") }`);
    expect(stale?.LogGroupName).toEqual({ Ref: logicalIdOf(stateless, 'AWS::Logs::LogGroup', 'ApiFunctionLogs') });
    // The stage as a dimension, from the line's `stage` (the api's STAGE), as ModelCostUsd has it; the alarm watches exactly that metric.
    expect(stale?.MetricTransformations?.[0]?.Dimensions).toEqual([{ Key: 'stage', Value: '$.stage' }]);
    const api = Object.entries(stateless.findResources('AWS::Lambda::Function')).find(([id]) =>
      id.startsWith('ApiFunction'),
    )?.[1];
    expect(api?.Properties.Environment.Variables.STAGE).toBe('check');
    stateless.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'ReflectiveMemory',
      MetricName: 'StaleSearchIndex',
      Dimensions: [{ Name: 'stage', Value: 'check' }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it("alarms when the last day's model cost passes the stage's threshold (req R-SLP-14: under $1/day)", () => {
    stateless.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'ReflectiveMemory',
      MetricName: 'ModelCostUsd',
      // The stage too: dev and prod in one account do not add up (test/infra/stage-names.test.ts).
      Dimensions: [{ Name: 'stage', Value: 'check' }],
      Statistic: 'Sum',
      Period: 86_400,
      EvaluationPeriods: 1,
      Threshold: config.alarms.dailyModelCostUsd,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(config.alarms.dailyModelCostUsd).toBe(1);
  });

  it('publishes to an encrypted topic that refuses plain HTTP and lets only this account and region’s alarms publish', () => {
    const topic = topicId(stateful);
    stateful.hasResourceProperties('AWS::SNS::Topic', {
      TopicName: 'reflective-memory-check-alarms',
      KmsMasterKeyId: dataKeyArn(stateful),
    });
    const [policy] = Object.values(stateful.findResources('AWS::SNS::TopicPolicy')).map((p) => p.Properties);
    expect(policy!.Topics).toEqual([{ Ref: topic }]);
    expect(policy!.PolicyDocument.Statement).toContainEqual({
      Sid: 'AllowCloudWatchAlarmsToPublish',
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: 'sns:Publish',
      Resource: { Ref: topic },
      Condition: fromOwnAlarms,
    });
    expect(stateful.findOutputs('AlarmTopicArn').AlarmTopicArn?.Value).toEqual({ Ref: topic });
    // No alarmEmail in the stage: no subscription.
    stateful.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  it('subscribes the stage’s alarmEmail to the topic', () => {
    const t = buildStage('ops', { alarmEmail: 'oncall@example.com' });
    t.stateful.resourceCountIs('AWS::SNS::Subscription', 1);
    t.stateful.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
      TopicArn: { Ref: topicId(t.stateful) },
    });
  });

  it('alarms on Errors and Throttles of the api and the sweep, at the stage thresholds, and of no queue consumer', () => {
    const alarms = alarmsOf(stateless);
    const lambdaAlarms = alarms.filter((a) => a.Namespace === 'AWS/Lambda');
    expect(lambdaAlarms).toHaveLength(4);
    for (const name of ['Signal', 'Reflector', 'Idle']) {
      const fn = logicalIdOf(stateless, 'AWS::Lambda::Function', `${name}Function`);
      // Their failures go back to their queue: its AgeAlarm and DlqDepthAlarm stand for them.
      expect(JSON.stringify(lambdaAlarms), name).not.toContain(`"${fn}"`);
    }
    for (const name of ['Sweep', 'Api']) {
      const fn = logicalIdOf(stateless, 'AWS::Lambda::Function', `${name}Function`);
      for (const [metric, threshold] of [
        ['Errors', config.alarms.functionErrors],
        ['Throttles', config.alarms.functionThrottles],
      ] as const) {
        const matching = alarms.filter(
          (a) =>
            a.MetricName === metric &&
            JSON.stringify(a.Dimensions) === JSON.stringify([{ Name: 'FunctionName', Value: { Ref: fn } }]),
        );
        expect(matching, `${name} ${metric}`).toHaveLength(1);
        expect(matching[0], `${name} ${metric}`).toMatchObject({
          Namespace: 'AWS/Lambda',
          Statistic: 'Sum',
          Period: 300,
          EvaluationPeriods: 1,
          Threshold: threshold,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'notBreaching',
        });
      }
    }
  });

  it('alarms on the age of the oldest message of each main queue, adding the IdleQueue’s delivery delay', () => {
    const alarms = alarmsOf(stateful);
    for (const key of ['turn', 'job', 'idle'] as const) {
      const def = QUEUES[key];
      const queueName = `reflective-memory-check-${def.id}${def.fifo ? '.fifo' : ''}`;
      const [queue] = Object.entries(stateful.findResources('AWS::SQS::Queue')).find(
        ([, q]) => q.Properties.QueueName === queueName,
      )!;
      const age = alarms.filter(
        (a) =>
          a.MetricName === 'ApproximateAgeOfOldestMessage' &&
          JSON.stringify(a.Dimensions) ===
            JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queue, 'QueueName'] } }]),
      );
      expect(age, key).toHaveLength(1);
      const delay = 'delaySeconds' in def ? def.delaySeconds : 0;
      expect(age[0], key).toMatchObject({
        Namespace: 'AWS/SQS',
        Statistic: 'Maximum',
        Period: 300,
        Threshold: config.alarms.queueAgeSeconds[key] + delay,
      });
    }
    expect(QUEUES.idle.delaySeconds).toBe(300);
    const idle = alarms.find((a) => a.id.startsWith('IdleQueueAgeAlarm'));
    expect(idle?.Threshold).toBe(config.alarms.queueAgeSeconds.idle + 300);
  });

  it('puts sweep events EventBridge cannot deliver in a standard DLQ, after 2 retries within an hour, and alarms on it', () => {
    const dlq = logicalIdOf(stateless, 'AWS::SQS::Queue', 'SweepScheduleDlq');
    const rules = Object.entries(stateless.findResources('AWS::Events::Rule'));
    // The three schedules and the batch inference jobs' end.
    expect(rules).toHaveLength(4);
    for (const [, rule] of rules) {
      expect(rule.Properties.Targets, rule.Properties.Description).toEqual([
        expect.objectContaining({
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [dlq, 'Arn'] } },
          RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
        }),
      ]);
    }
    const queue = stateless.findResources('AWS::SQS::Queue')[dlq]!.Properties;
    expect(queue.FifoQueue).toBeUndefined(); // EventBridge DLQs must be standard queues
    // EventBridge may send to it only on behalf of these four rules.
    const sends = Object.values(stateless.findResources('AWS::SQS::QueuePolicy'))
      .filter((p) => JSON.stringify(p.Properties.Queues) === JSON.stringify([{ Ref: dlq }]))
      .flatMap((p) => p.Properties.PolicyDocument.Statement)
      .filter((st) => st.Effect === 'Allow');
    expect(
      sends.map((st) => ({
        principal: st.Principal,
        action: st.Action,
        resource: st.Resource,
        condition: st.Condition,
      })),
    ).toEqual(
      rules.map(([id]) => ({
        principal: { Service: 'events.amazonaws.com' },
        action: 'sqs:SendMessage',
        resource: { 'Fn::GetAtt': [dlq, 'Arn'] },
        condition: { ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [id, 'Arn'] } } },
      })),
    );
    const depth = alarmsOf(stateless).filter(
      (a) =>
        JSON.stringify(a.Dimensions) ===
        JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlq, 'QueueName'] } }]),
    );
    expect(depth).toEqual([
      expect.objectContaining({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1, Period: 60 }),
    ]);
  });

  it('caps the reflector’s event source at the stage’s maximum concurrency, and only that one', () => {
    const scaling = (template: Template) =>
      Object.fromEntries(
        Object.entries(template.findResources('AWS::Lambda::EventSourceMapping')).map(([id, m]) => [
          id.match(/^[A-Z][a-z]+/)![0],
          m.Properties.ScalingConfig,
        ]),
      );
    expect(scaling(stateless)).toEqual({
      Signal: undefined,
      Idle: undefined,
      Reflector: { MaximumConcurrency: config.maxConcurrency.reflector },
    });
    expect(config.maxConcurrency.reflector).toBe(5);
    const prod = Template.fromStack(
      buildApp(new App({ context: { stage: 'prod', 'aws:cdk:bundling-stacks': [] } })).stateless,
    );
    expect(scaling(prod).Reflector).toEqual({ MaximumConcurrency: 20 });
  });
});
