import { fileURLToPath } from 'node:url';
import { type CfnElement, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AccessLogField, AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { CorsHttpMethod, HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { EventField, Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, Code, Function as LambdaFn, Runtime } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource, type SqsEventSourceProps } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { type NagPackSuppression, NagSuppressions, type RegexAppliesTo } from 'cdk-nag';
import type { Construct } from 'constructs';
import type { StageConfig } from '../config/stages.js';
import { functionRole, MemoryFunction } from '../constructs/memory-function.js';
import { PERMISSIONS, type Permissions } from '../permissions.js';
import { FUNCTION_TIMEOUT_SECONDS, QUEUES, type QueueKey, SWEEPS } from '../resources.js';
import { modelGrant, modelIdFor } from './reflector-model.js';
import type { MemoryQueue, MemoryUserPool } from './stateful-stack.js';

export interface StatelessStackProps extends StackProps {
  stage: string;
  config: StageConfig;
  table: Table;
  bucket: Bucket;
  queues: Record<QueueKey, MemoryQueue>;
  /** The key of the table, bucket and queues (the stateful stack's `dataKey`). */
  dataKey: IKey;
  /** The Cognito pool the memory API trusts; required when `config.auth.issuer` is not set. */
  users?: MemoryUserPool;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const entry = (name: string) => `${ROOT}functions/${name}/handler.ts`;

/**
 * A cdk-nag `appliesTo` for the IAM5 finding on the wildcard resource `<ARN of resource>/<tail>`.
 * The resource lives in the stateful stack, so cdk-nag renders its ARN either as a GetAtt
 * (`<MemoryBucket1234ABCD.Arn>`) or as the name of the stateful stack's export; both name the
 * resource's logical id in one path segment, and the tail must match exactly.
 */
const wildcardUnder = (resource: Construct, tail: string): RegexAppliesTo => {
  const logicalId = Stack.of(resource).getLogicalId(resource.node.defaultChild as CfnElement);
  const literal = tail.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return { regex: `/^Resource::[^/]*${logicalId}[^/]*\\/${literal}$/` };
};

/** Functions, their event sources, grants and schedules, and the memory API. */
export class StatelessStack extends Stack {
  readonly signalFn: MemoryFunction;
  readonly reflectorFn: MemoryFunction;
  readonly idleFn: MemoryFunction;
  readonly sweepFn: MemoryFunction;
  readonly apiFn: MemoryFunction;
  readonly api: HttpApi;

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
    this.signalFn.addEventSource(this.eventSource(PERMISSIONS.signal, props, { batchSize: 10, reportBatchItemFailures: true }));
    this.grantPermissions(this.signalFn, PERMISSIONS.signal, props);

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
    this.idleFn.addEventSource(this.eventSource(PERMISSIONS.idle, props, { batchSize: 10, reportBatchItemFailures: true }));
    this.grantPermissions(this.idleFn, PERMISSIONS.idle, props);

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
    // The id the stack's Region invokes (`us.anthropic…` from us-east-1, `eu.…` from eu-west-1),
    // derived from the stage's foundation model and inference scope: it replaces the bare
    // model id set above until the environment block reads modelIdFor(this, config) itself.
    this.reflectorFn.addEnvironment('MODEL_ID', modelIdFor(this, config));
    this.reflectorFn.addEventSource(this.eventSource(PERMISSIONS.reflector, props, { batchSize: 1, reportBatchItemFailures: true }));
    this.grantPermissions(this.reflectorFn, PERMISSIONS.reflector, props);

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
    this.grantPermissions(this.sweepFn, PERMISSIONS.sweep, props);
    for (const sweep of SWEEPS) {
      const name = sweep.charAt(0).toUpperCase() + sweep.slice(1);
      new Rule(this, `${name}Schedule`, {
        description: `${sweep} sweep`,
        schedule: Schedule.expression(config.schedules[sweep]),
        // The schedule's own time travels with it: the sweep's "now" is never the wall clock.
        targets: [new LambdaFunction(this.sweepFn, { event: RuleTargetInput.fromObject({ sweep, time: EventField.time }), retryAttempts: 2 })],
      });
    }

    this.apiFn = new MemoryFunction(this, 'ApiFunction', {
      entry: entry('api'),
      projectRoot: ROOT,
      description: 'Memory API: search/save/retrieve, tiers, reflections, review console',
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS.api,
      memorySize: config.memoryMb.api,
      environment: {
        ...common,
        POWERTOOLS_SERVICE_NAME: 'api',
        STAGE: props.stage,
      },
    });
    this.grantPermissions(this.apiFn, PERMISSIONS.api, props);

    this.api = this.memoryApi(props);
    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint, description: 'Memory API base URL: /v1/* needs a bearer JWT; /openapi.json and /console are public' });
  }

  /**
   * The event source on the queue infra/permissions.ts says the function consumes. It is
   * built on a view of the queue that leaves its key out, so the event source grants only
   * the SQS actions (receive, delete, visibility): CDK would otherwise add kms:Decrypt on
   * the key with no condition, and the function's KMS grants come from the table instead.
   */
  private eventSource(permissions: Permissions, props: StatelessStackProps, options: SqsEventSourceProps): SqsEventSource {
    const key = permissions.consumes;
    if (key === null) throw new Error('this function consumes no queue (infra/permissions.ts)');
    const { queue } = props.queues[key];
    const view = Queue.fromQueueAttributes(this, `${QUEUES[key].id}Source`, { queueArn: queue.queueArn, queueUrl: queue.queueUrl, fifo: QUEUES[key].fifo });
    return new SqsEventSource(view, options);
  }

  /**
   * Grants exactly what infra/permissions.ts lists for the function: DynamoDB actions on the
   * table and its indexes, S3 actions on the listed key patterns, SendMessage on the listed
   * queues, InvokeModel on the stage's model (its Region's inference profile and the foundation
   * models that profile routes to, no wildcard), and KMS actions on the data key, each only
   * through the service that uses it. No grant helper with wider actions is used.
   */
  private grantPermissions(fn: MemoryFunction, permissions: Permissions, props: StatelessStackProps): void {
    const { table, bucket, queues, config, dataKey } = props;
    if (permissions.dynamodb.length > 0) table.grant(fn, ...permissions.dynamodb.map((a) => `dynamodb:${a}`));
    for (const [pattern, actions] of Object.entries(permissions.s3)) {
      fn.addToRolePolicy(new PolicyStatement({ actions: actions.map((a) => `s3:${a}`), resources: [bucket.arnForObjects(pattern)] }));
    }
    if (permissions.sends.length > 0) {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: permissions.sends.map((q) => queues[q].queue.queueArn) }));
    }
    for (const [service, actions] of Object.entries(permissions.kms)) {
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: actions.map((a) => `kms:${a}`),
          resources: [dataKey.keyArn],
          conditions: { StringEquals: { 'kms:ViaService': `${service}.${this.region}.amazonaws.com` } },
        }),
      );
    }
    // InvokeModel on the stage's model in this Region: its inference profile and the foundation
    // models the profile routes to, only through it (infra/stacks/reflector-model.ts).
    if (permissions.model) for (const statement of modelGrant(this, config)) fn.addToRolePolicy(statement);

    // cdk-nag AwsSolutions-IAM5 flags every wildcard resource; these are the intended ones,
    // each named exactly (appliesTo), so any other wildcard on the role is still reported.
    const wildcards: NagPackSuppression[] = [];
    if (permissions.dynamodb.length > 0) {
      wildcards.push({
        id: 'AwsSolutions-IAM5',
        reason:
          "The table grant also covers the table's global secondary indexes (index/*, today only gsi1), which Query needs; the actions are exactly the DynamoDB actions infra/permissions.ts lists for this function.",
        appliesTo: [wildcardUnder(table, 'index/*')],
      });
    }
    const patterns = Object.keys(permissions.s3);
    if (patterns.length > 0) {
      wildcards.push({
        id: 'AwsSolutions-IAM5',
        reason: `S3 grants are per key prefix, exactly as infra/permissions.ts lists them for this function (${patterns.join(', ')}): the wildcards stand for user ids and object names, known only per request, and test/infra/stacks.test.ts checks that the synthesized grants equal that table.`,
        appliesTo: patterns.map((pattern) => wildcardUnder(bucket, pattern)),
      });
    }
    if (wildcards.length > 0) NagSuppressions.addResourceSuppressions(fn.role!, wildcards, true);
  }

  /**
   * The HTTP API in front of the API function. `/v1/*` needs a JWT from the trusted issuer
   * (the stage's own OIDC issuer, or the stateful stack's Cognito pool); the OpenAPI document
   * and the review console's page are public, and the console signs in to call `/v1/*`.
   */
  private memoryApi(props: StatelessStackProps): HttpApi {
    const { config } = props;
    let issuer: string;
    let audience: string[];
    if (config.auth.issuer) {
      issuer = config.auth.issuer;
      audience = config.auth.audience ?? [];
      if (audience.length === 0) throw new Error(`stage ${props.stage}: auth.issuer is set, so auth.audience must list at least one audience`);
    } else {
      if (!props.users) throw new Error(`stage ${props.stage}: no auth.issuer, so the stateful stack's Cognito user pool must be passed in`);
      // ProviderURL is cognito-idp.<region>.amazonaws.com/<pool id>: the issuer without its scheme.
      issuer = `https://${props.users.userPool.userPoolProviderUrl}`;
      audience = [props.users.client.userPoolClientId];
    }
    const authorizer = new HttpJwtAuthorizer('JwtAuthorizer', issuer, {
      jwtAudience: audience,
      identitySource: ['$request.header.Authorization'],
    });

    const api = new HttpApi(this, 'MemoryApi', {
      apiName: `reflective-memory-${props.stage}-api`,
      description: 'Reflective memory API',
      corsPreflight: {
        allowOrigins: ['*'],
        allowHeaders: ['Authorization', 'Content-Type'],
        allowMethods: [CorsHttpMethod.GET, CorsHttpMethod.POST, CorsHttpMethod.PUT, CorsHttpMethod.PATCH, CorsHttpMethod.DELETE, CorsHttpMethod.OPTIONS],
        maxAge: Duration.hours(1),
      },
      // The $default stage is added below, with throttling and access logs.
      createDefaultStage: false,
    });
    const accessLogs = new LogGroup(this, 'MemoryApiAccessLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    new HttpStage(this, 'MemoryApiDefaultStage', {
      httpApi: api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: 100, burstLimit: 200 },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: AccessLogField.contextRequestId(),
            ip: AccessLogField.contextIdentitySourceIp(),
            requestTime: AccessLogField.contextRequestTime(),
            routeKey: AccessLogField.contextRouteKey(),
            path: AccessLogField.contextPath(),
            status: AccessLogField.contextStatus(),
            responseLength: AccessLogField.contextResponseLength(),
            latency: AccessLogField.contextResponseLatency(),
            integrationLatency: AccessLogField.contextIntegrationLatency(),
            integrationError: AccessLogField.contextIntegrationErrorMessage(),
            authorizerError: AccessLogField.contextAuthorizerError(),
            sub: AccessLogField.contextAuthorizerClaims('sub'),
          }),
        ),
      },
    });

    const integration = new HttpLambdaIntegration('ApiIntegration', this.apiFn);
    const openapi = api.addRoutes({ path: '/openapi.json', methods: [HttpMethod.GET], integration });
    NagSuppressions.addResourceSuppressions(openapi, [
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'The OpenAPI document is public by design: the API function answers it with the document generated from the route contract and reads no memory for it; every /v1 route it describes needs a JWT.',
      },
    ]);
    const consolePage = api.addRoutes({ path: '/console', methods: [HttpMethod.GET], integration });
    NagSuppressions.addResourceSuppressions(consolePage, [
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'The review console page is public by design: the API function answers it with one fixed HTML page and reads no memory for it; the page calls /v1/* with the bearer token the reviewer enters, and those routes need a JWT.',
      },
    ]);
    api.addRoutes({ path: '/v1/{proxy+}', methods: [HttpMethod.ANY], integration, authorizer });

    // An ANY route also catches the browser's CORS preflight, which carries no token, so the
    // authorizer would refuse it. A more specific OPTIONS route without the authorizer wins;
    // it goes to a tiny function, never to the memory function, and API Gateway adds the CORS
    // headers configured above to its 204. Its role may only write its own log group; it has
    // no bundle and no dependencies, so it runs on the newest Node.js runtime.
    const preflightLogs = new LogGroup(this, 'PreflightFunctionLogs', { retention: RetentionDays.ONE_WEEK, removalPolicy: RemovalPolicy.DESTROY });
    const preflightFn = new LambdaFn(this, 'PreflightFunction', {
      description: 'CORS preflight for /v1/*: 204, no body',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: 128,
      timeout: Duration.seconds(3),
      handler: 'index.handler',
      code: Code.fromInline('exports.handler = async () => ({ statusCode: 204 });'),
      logGroup: preflightLogs,
      role: functionRole(this, 'PreflightFunctionRole', preflightLogs),
    });
    const preflight = api.addRoutes({ path: '/v1/{proxy+}', methods: [HttpMethod.OPTIONS], integration: new HttpLambdaIntegration('PreflightIntegration', preflightFn) });
    NagSuppressions.addResourceSuppressions(preflight, [
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'Browsers send the CORS preflight without the Authorization header, so this OPTIONS route cannot carry the JWT authorizer; it goes to a function that returns 204 with no body and whose role may only write its own logs, never to the memory function.',
      },
    ]);
    return api;
  }
}
