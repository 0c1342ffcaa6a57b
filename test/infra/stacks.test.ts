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
import { parseEnv } from '../../lib/adapters/config.js';

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

interface Statement {
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
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
  if (!via || Object.keys(condition!).length !== 1 || Object.keys(condition!.StringEquals!).length !== 1) return undefined;
  const [head, region, tail] = via['Fn::Join'][1];
  return JSON.stringify(region) === JSON.stringify({ Ref: 'AWS::Region' }) && tail === '.amazonaws.com' ? String(head).replace(/\.$/, '') : undefined;
};

/** The logical id of the stage's data key (the one AWS::KMS::Key of the stateful stack). */
const dataKeyId = (template: Template): string => {
  const keys = Object.keys(template.findResources('AWS::KMS::Key'));
  expect(keys).toHaveLength(1);
  return keys[0]!;
};
const dataKeyArn = (template: Template) => ({ 'Fn::GetAtt': [dataKeyId(template), 'Arn'] });

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
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
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

  it('has a Cognito user pool without self sign-up, a memory-admin group and a secretless app client', () => {
    stateful.resourceCountIs('AWS::Cognito::UserPool', 1);
    stateful.hasResourceProperties('AWS::Cognito::UserPool', {
      UserPoolName: 'reflective-memory-check-users',
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      UserPoolAddOns: { AdvancedSecurityMode: 'OFF' },
      Policies: { PasswordPolicy: { MinimumLength: 8, RequireLowercase: true, RequireUppercase: true, RequireNumbers: true, RequireSymbols: true } },
    });
    stateful.hasResource('AWS::Cognito::UserPool', { DeletionPolicy: 'Delete' });
    const prod = buildApp(new App({ context: { stage: 'prod', 'aws:cdk:bundling-stacks': [] } }));
    Template.fromStack(prod.stateful).hasResource('AWS::Cognito::UserPool', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    stateful.hasResourceProperties('AWS::Cognito::UserPoolGroup', { GroupName: 'memory-admin', Description: Match.stringLikeRegexp('GLOBAL') });
    stateful.hasResourceProperties('AWS::Cognito::UserPoolClient', {
      GenerateSecret: false,
      ExplicitAuthFlows: Match.arrayWith(['ALLOW_USER_PASSWORD_AUTH', 'ALLOW_USER_SRP_AUTH']),
    });
    expect(Object.keys(stateful.findOutputs('*'))).toEqual(expect.arrayContaining(['UserPoolId', 'UserPoolClientId']));
  });
});

describe('encryption at rest and in transit', () => {
  it('has one customer managed key per stage: rotated, with a per-stage alias and the default key policy', () => {
    stateful.resourceCountIs('AWS::KMS::Key', 1);
    stateful.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      // Only the account itself: IAM policies grant use (the function roles, from infra/permissions.ts).
      KeyPolicy: {
        Statement: [
          {
            Effect: 'Allow',
            Action: 'kms:*',
            Principal: { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']] } },
            Resource: '*',
          },
        ],
        Version: '2012-10-17',
      },
    });
    stateful.resourceCountIs('AWS::KMS::Alias', 1);
    stateful.hasResourceProperties('AWS::KMS::Alias', { AliasName: 'alias/reflective-memory-check', TargetKeyId: dataKeyArn(stateful) });
    expect(Object.keys(stateful.findOutputs('*'))).toContain('DataKeyArn');
  });

  it('keeps or deletes the key and its alias with the data (retainData)', () => {
    stateful.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Delete', UpdateReplacePolicy: 'Delete', Properties: Match.objectLike({ PendingWindowInDays: 7 }) });
    stateful.hasResource('AWS::KMS::Alias', { DeletionPolicy: 'Delete' });
    const prod = Template.fromStack(buildApp(new App({ context: { stage: 'prod', 'aws:cdk:bundling-stacks': [] } })).stateful);
    prod.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain' });
    prod.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    prod.hasResource('AWS::KMS::Alias', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    prod.hasResourceProperties('AWS::KMS::Alias', { AliasName: 'alias/reflective-memory-prod' });
  });

  it('encrypts the table, the bucket (bucket key on) and every queue and DLQ with that key', () => {
    const key = dataKeyArn(stateful);
    stateful.hasResourceProperties('AWS::DynamoDB::Table', { SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: key } });
    stateful.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ BucketKeyEnabled: true, ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: key } }] },
    });
    const queues = Object.entries(stateful.findResources('AWS::SQS::Queue'));
    expect(queues).toHaveLength(6);
    for (const [id, q] of queues) {
      expect(q.Properties.KmsMasterKeyId, id).toEqual(key);
      expect(q.Properties.SqsManagedSseEnabled, id).toBeUndefined();
    }
  });

  it('refuses requests without TLS on the bucket and on every queue and DLQ', () => {
    const denyPlainHttp = { Effect: 'Deny', Principal: { AWS: '*' }, Condition: { Bool: { 'aws:SecureTransport': 'false' } } };
    stateful.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: Match.stringLikeRegexp('^MemoryBucket') },
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ ...denyPlainHttp, Action: 's3:*' })]) },
    });
    const policies = Object.values(stateful.findResources('AWS::SQS::QueuePolicy')).map((p) => p.Properties);
    for (const id of Object.keys(stateful.findResources('AWS::SQS::Queue'))) {
      const denies = policies
        .filter((p) => JSON.stringify(p.Queues) === JSON.stringify([{ Ref: id }]))
        .flatMap((p) => p.PolicyDocument.Statement)
        .filter((st) => JSON.stringify(st.Resource) === JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] }));
      expect(denies, id).toContainEqual({ ...denyPlainHttp, Action: 'sqs:*', Resource: { 'Fn::GetAtt': [id, 'Arn'] } });
    }
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
  it('runs every function on Node.js 22, ARM64, with tracing', () => {
    const fns = stateless.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x', Architectures: ['arm64'], TracingConfig: { Mode: 'Active' } } });
    expect(Object.keys(fns).filter((id) => /^(Signal|Reflector|Idle|Sweep|Api)Function/.test(id))).toHaveLength(5);
  });

  it('wires the three queues to their functions with partial batch responses', () => {
    const mappings = Object.entries(stateless.findResources('AWS::Lambda::EventSourceMapping'));
    expect(mappings).toHaveLength(3);
    for (const [, m] of mappings) expect(m.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    // Each function reads the queue infra/permissions.ts says it consumes.
    const wired = mappings.map(([id, m]) => `${id.match(/^[A-Z][a-z]+/)![0]} ${JSON.stringify(m.Properties.EventSourceArn).match(/GetAtt([A-Za-z]+Queue)/)![1]}`);
    expect(wired.sort()).toEqual(['Idle IdleQueue', 'Reflector ReflectionQueue', 'Signal TurnQueue']);
    expect([PERMISSIONS.signal.consumes, PERMISSIONS.idle.consumes, PERMISSIONS.reflector.consumes, PERMISSIONS.sweep.consumes, PERMISSIONS.api.consumes]).toEqual([
      'turn',
      'idle',
      'reflection',
      null,
      null,
    ]);
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

  it('grants each function exactly what infra/permissions.ts lists, and nothing wider', () => {
    const ids: Record<FunctionKey, string> = { signal: 'SignalFunction', idle: 'IdleFunction', reflector: 'ReflectorFunction', sweep: 'SweepFunction', api: 'ApiFunction' };
    const eventSourceActions = ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'];
    /** The key pattern of an S3 object ARN: the literal tail of its Fn::Join. */
    const patternOf = (resource: unknown): string => {
      const parts = (resource as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
      return String(parts.at(-1)).replace(/^\//, '');
    };
    for (const [fn, id] of Object.entries(ids) as Array<[FunctionKey, string]>) {
      const permissions = PERMISSIONS[fn];
      const statements = statementsOf(stateless, id);
      const actions = [...new Set(statements.flatMap(actionsOf))];
      expect(actions.filter((a) => a.startsWith('dynamodb:')).sort(), fn).toEqual(permissions.dynamodb.map((a) => `dynamodb:${a}`).sort());
      const listing = statements.filter((st) => actionsOf(st).includes('s3:ListBucket'));
      expect(listing.map((st) => ({ actions: actionsOf(st), resource: st.Resource, condition: st.Condition })), fn).toEqual(
        permissions.listBucket ? [{ actions: ['s3:ListBucket'], resource: { 'Fn::ImportValue': expect.stringMatching(/MemoryBucket.*Arn/) }, condition: undefined }] : [],
      );
      const s3 = statements
        .filter((st) => actionsOf(st).some((a) => a.startsWith('s3:') && a !== 's3:ListBucket'))
        .map((st) => ({ pattern: patternOf(st.Resource), actions: actionsOf(st).sort() }))
        .sort((x, y) => x.pattern.localeCompare(y.pattern));
      const expected = Object.entries(permissions.s3)
        .map(([pattern, acts]) => ({ pattern, actions: acts.map((a) => `s3:${a}`).sort() }))
        .sort((x, y) => x.pattern.localeCompare(y.pattern));
      expect(s3, fn).toEqual(expected);
      const sends = statements.filter((st) => actionsOf(st).includes('sqs:SendMessage'));
      expect(sends.flatMap((st) => (Array.isArray(st.Resource) ? st.Resource : [st.Resource])).length, fn).toBe(permissions.sends.length);
      expect(sends.every((st) => actionsOf(st).length === 1), fn).toBe(true);
      expect(actions.includes('bedrock:InvokeModel'), fn).toBe(permissions.model);
      const hasEventSource = permissions.consumes !== null;
      expect(actions.filter((a) => eventSourceActions.includes(a)).sort(), fn).toEqual(hasEventSource ? eventSourceActions : []);
      // Logs: only writes, only to the function's own log group (no AWSLambdaBasicExecutionRole).
      const logs = statements.filter((st) => actionsOf(st).some((a) => a.startsWith('logs:')));
      expect(logs.map((st) => ({ actions: actionsOf(st).sort(), resource: st.Resource })), fn).toEqual([
        { actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resource: { 'Fn::GetAtt': [expect.stringMatching(new RegExp(`^${id}Logs`)), 'Arn'] } },
      ]);
      // KMS: exactly the table's actions per service, on the data key, each only through that
      // service (so no event source or grant helper adds an unconditioned kms:Decrypt).
      const kms = statements
        .filter((st) => actionsOf(st).some((a) => a.startsWith('kms:')))
        .map((st) => ({ via: viaServiceOf(st), actions: actionsOf(st).sort(), resource: st.Resource }))
        .sort((x, y) => String(x.via).localeCompare(String(y.via)));
      const expectedKms = (Object.entries(permissions.kms) as Array<[KmsService, string[]]>)
        .map(([service, acts]) => ({ via: service, actions: acts.map((a) => `kms:${a}`).sort(), resource: { 'Fn::ImportValue': expect.stringMatching(/DataKey/) } }))
        .sort((x, y) => x.via.localeCompare(y.via));
      expect(kms, fn).toEqual(expectedKms);
      // Nothing beyond the table above, the event source's own actions, its logs and X-Ray.
      expect(
        actions.filter((a) => !/^(dynamodb:|s3:|xray:|logs:|kms:)/.test(a) && a !== 'sqs:SendMessage' && a !== 'bedrock:InvokeModel' && !eventSourceActions.includes(a)),
        fn,
      ).toEqual([]);
      // The table grant covers the GSI.
      if (permissions.dynamodb.includes('Query')) expect(JSON.stringify(statements.filter((st) => actionsOf(st).includes('dynamodb:Query'))), fn).toContain('/index/*');
    }
  });

  it("gives every function exactly the variables its environment schema reads (functions/<name>/env.ts), each valid", () => {
    const schemas = { SignalFunction: SignalEnvSchema, IdleFunction: IdleEnvSchema, ReflectorFunction: ReflectorEnvSchema, SweepFunction: SweepEnvSchema, ApiFunction: ApiEnvSchema };
    const functions = stateless.findResources('AWS::Lambda::Function');
    for (const [prefix, schema] of Object.entries(schemas)) {
      const entries = Object.entries(functions).filter(([id]) => id.startsWith(prefix) && !id.includes('Role'));
      expect(entries, prefix).toHaveLength(1);
      const variables = (entries[0]![1].Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
      const read = Object.keys(schema.shape);
      expect(Object.keys(variables).filter((k) => !read.includes(k) && !(RUNTIME_VARIABLES as readonly string[]).includes(k)), `${prefix}: set but never read`).toEqual([]);
      const required = Object.entries(schema.shape).filter(([, field]) => !field.safeParse(undefined).success).map(([k]) => k);
      expect(required.filter((k) => !(k in variables)), `${prefix}: read but never set`).toEqual([]);
      // Tokens (names and URLs of the stateful stack's resources) stand for non-empty strings.
      const concrete = Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, typeof v === 'string' ? v : 'resolved-at-deploy']));
      expect(() => parseEnv(schema, concrete), prefix).not.toThrow();
    }
  });

  it('keeps the API function away from queues, the model and whole-table deletes', () => {
    const api = policiesOf(stateless, 'ApiFunction');
    expect(api).not.toContain('sqs:');
    expect(api).not.toContain('bedrock:');
    expect(api).not.toContain('dynamodb:Scan');
    expect(api).not.toContain('dynamodb:DeleteItem');
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
    stateless.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'ANY /v1/{proxy+}', AuthorizationType: 'JWT', AuthorizerId: Match.anyValue() });
    const routes = Object.values(stateless.findResources('AWS::ApiGatewayV2::Route')).map((r) => r.Properties);
    for (const key of ['GET /openapi.json', 'GET /console', 'OPTIONS /v1/{proxy+}']) {
      const route = routes.find((r) => r.RouteKey === key);
      expect(route, key).toBeDefined();
      expect(route!.AuthorizationType ?? 'NONE', key).toBe('NONE');
      expect(route!.AuthorizerId, key).toBeUndefined();
    }
    expect(routes.map((r) => r.RouteKey).sort()).toEqual(['ANY /v1/{proxy+}', 'GET /console', 'GET /openapi.json', 'OPTIONS /v1/{proxy+}']);
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
    expect(statementsOf(stateless, 'PreflightFunction').flatMap(actionsOf).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
  });

  it('gives no function role an AWS managed policy', () => {
    const roles = Object.values(stateless.findResources('AWS::IAM::Role')).filter((r) => JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('lambda.amazonaws.com'));
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

describe('stage with its own KMS key (dataKeyArn)', () => {
  const env = { account: '111122223333', region: 'eu-west-1' };
  const arn = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';

  it('creates no key and encrypts the table, bucket, queues and DLQs with the one it names', () => {
    const t = buildStage('byok', { dataKeyArn: arn }, env);
    t.stateful.resourceCountIs('AWS::KMS::Key', 0);
    t.stateful.resourceCountIs('AWS::KMS::Alias', 0);
    t.stateful.hasResourceProperties('AWS::DynamoDB::Table', { SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: arn } });
    t.stateful.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ BucketKeyEnabled: true, ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: arn } }] },
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

  it('refuses an alias or a key in another region', () => {
    expect(() => buildStage('byok', { dataKeyArn: 'arn:aws:kms:eu-west-1:111122223333:alias/mine' }, env)).toThrow(/not an alias/);
    expect(() => buildStage('byok', { dataKeyArn: arn.replace('eu-west-1', 'us-east-1') }, env)).toThrow(/us-east-1/);
  });
});
