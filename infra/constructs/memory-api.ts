/** The memory API: the HTTP API, its JWT authorizer, its public routes and the CORS preflight route. */
import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { AccessLogField, AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { CorsHttpMethod, HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Architecture, Code, Function as LambdaFn, Runtime } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { NagSuppressions } from 'cdk-nag';
import type { StatelessStackProps } from '../stacks/stateless-props.js';
import { functionRole, type MemoryFunction } from './memory-function.js';

/**
 * The HTTP API in front of the API function. `/v1/*` needs a JWT from the trusted issuer
 * (the stage's own OIDC issuer, or the stateful stack's Cognito pool); the OpenAPI document
 * and the review console's page are public, and the console signs in to call `/v1/*`.
 */
export function memoryApi(stack: Stack, props: StatelessStackProps, apiFn: MemoryFunction): HttpApi {
  const authorizer = jwtAuthorizer(props);
  const api = httpApi(stack, props);
  const integration = new HttpLambdaIntegration('ApiIntegration', apiFn);
  publicRoutes(api, integration);
  api.addRoutes({ path: '/v1/{proxy+}', methods: [HttpMethod.ANY], integration, authorizer });
  preflightRoute(stack, api);
  return api;
}

/** The JWT authorizer of `/v1/*`: the stage's own OIDC issuer, or the stateful stack's Cognito pool. */
function jwtAuthorizer(props: StatelessStackProps): HttpJwtAuthorizer {
  const { config } = props;
  let issuer: string;
  let audience: string[];
  if (config.auth.issuer) {
    issuer = config.auth.issuer;
    audience = config.auth.audience ?? [];
    if (audience.length === 0)
      throw new Error(`stage ${props.stage}: auth.issuer is set, so auth.audience must list at least one audience`);
  } else {
    if (!props.users)
      throw new Error(
        `stage ${props.stage}: no auth.issuer, so the stateful stack's Cognito user pool must be passed in`,
      );
    // ProviderURL is cognito-idp.<region>.amazonaws.com/<pool id>: the issuer without its scheme.
    issuer = `https://${props.users.userPool.userPoolProviderUrl}`;
    audience = [props.users.client.userPoolClientId];
  }
  return new HttpJwtAuthorizer('JwtAuthorizer', issuer, {
    jwtAudience: audience,
    identitySource: ['$request.header.Authorization'],
  });
}

/** The HTTP API with CORS and its $default stage: throttled, with JSON access logs. */
function httpApi(stack: Stack, props: StatelessStackProps): HttpApi {
  const api = new HttpApi(stack, 'MemoryApi', {
    apiName: `reflective-memory-${props.stage}-api`,
    description: 'Reflective memory API',
    corsPreflight: {
      allowOrigins: ['*'],
      allowHeaders: ['Authorization', 'Content-Type'],
      allowMethods: [
        CorsHttpMethod.GET,
        CorsHttpMethod.POST,
        CorsHttpMethod.PUT,
        CorsHttpMethod.PATCH,
        CorsHttpMethod.DELETE,
        CorsHttpMethod.OPTIONS,
      ],
      maxAge: Duration.hours(1),
    },
    // The $default stage is added below, with throttling and access logs.
    createDefaultStage: false,
  });
  const accessLogs = new LogGroup(stack, 'MemoryApiAccessLogs', {
    retention: RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  new HttpStage(stack, 'MemoryApiDefaultStage', {
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
  return api;
}

/** GET /openapi.json and GET /console: public, answered by the API function. */
function publicRoutes(api: HttpApi, integration: HttpLambdaIntegration): void {
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
}

/**
 * The OPTIONS route of `/v1/*`, without the authorizer, onto a tiny function of its own.
 *
 * An ANY route also catches the browser's CORS preflight, which carries no token, so the
 * authorizer would refuse it. A more specific OPTIONS route without the authorizer wins;
 * it goes to a tiny function, never to the memory function, and API Gateway adds the CORS
 * headers of the API's corsPreflight (httpApi) to its 204. Its role may only write its own log group; it has
 * no bundle and no dependencies, so it runs on the newest Node.js runtime.
 */
function preflightRoute(stack: Stack, api: HttpApi): void {
  const preflightLogs = new LogGroup(stack, 'PreflightFunctionLogs', {
    retention: RetentionDays.ONE_WEEK,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const preflightFn = new LambdaFn(stack, 'PreflightFunction', {
    description: 'CORS preflight for /v1/*: 204, no body',
    runtime: Runtime.NODEJS_24_X,
    architecture: Architecture.ARM_64,
    memorySize: 128,
    timeout: Duration.seconds(3),
    handler: 'index.handler',
    code: Code.fromInline('exports.handler = async () => ({ statusCode: 204 });'),
    logGroup: preflightLogs,
    role: functionRole(stack, 'PreflightFunctionRole', preflightLogs),
  });
  const preflight = api.addRoutes({
    path: '/v1/{proxy+}',
    methods: [HttpMethod.OPTIONS],
    integration: new HttpLambdaIntegration('PreflightIntegration', preflightFn),
  });
  NagSuppressions.addResourceSuppressions(preflight, [
    {
      id: 'AwsSolutions-APIG4',
      reason:
        'Browsers send the CORS preflight without the Authorization header, so this OPTIONS route cannot carry the JWT authorizer; it goes to a function that returns 204 with no body and whose role may only write its own logs, never to the memory function.',
    },
  ]);
}
