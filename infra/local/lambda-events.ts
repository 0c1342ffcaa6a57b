import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, SQSEvent } from 'aws-lambda';

/** A Lambda SQS event holding these bodies (for invoking a handler directly). */
export function sqsEvent(
  bodies: ReadonlyArray<{ body: string; groupId?: string }>,
  queueArn = 'arn:aws:sqs:us-east-1:000000000000:local',
): SQSEvent {
  const now = String(Date.now());
  return {
    Records: bodies.map(({ body, groupId }, i) => ({
      messageId: randomUUID(),
      receiptHandle: `local-${i}`,
      body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: now,
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: now,
        ...(groupId ? { MessageGroupId: groupId, SequenceNumber: String(i + 1) } : {}),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: queueArn,
      awsRegion: 'us-east-1',
    })),
  };
}

/** The parts of an HTTP request an API Gateway HTTP API (payload 2.0) event is made of. */
export interface HttpRequestParts {
  method: string;
  /** The request path, as sent (percent-encoded). */
  path: string;
  /** The query string without its `?`. */
  rawQueryString?: string;
  /** The query parameters (a repeated one joined by commas, as API Gateway does). */
  query?: Record<string, string>;
  /** Path parameters, as API Gateway passes those of a route it matched. */
  pathParameters?: Record<string, string>;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body?: string;
  /** The body is base64 (API Gateway encodes a binary body). */
  isBase64Encoded?: boolean;
  /** The JWT authorizer's verified claims (none: no authorizer ran, or it found no token). */
  claims?: Record<string, unknown>;
  requestId: string;
  sourceIp?: string;
}

/** A Lambda HTTP API (payload 2.0) event for this request, as API Gateway builds it: the local HTTP API and the fuzzer invoke the api handler with it. */
export function httpApiEvent(req: HttpRequestParts): APIGatewayProxyEventV2 {
  const { headers } = req;
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: req.path,
    rawQueryString: req.rawQueryString ?? '',
    headers,
    ...(req.query && Object.keys(req.query).length > 0 ? { queryStringParameters: req.query } : {}),
    ...(req.pathParameters ? { pathParameters: req.pathParameters } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method: req.method,
        path: req.path,
        protocol: 'HTTP/1.1',
        sourceIp: req.sourceIp ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: req.requestId,
      routeKey: '$default',
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
      ...(req.claims ? { authorizer: { jwt: { claims: req.claims, scopes: null } } } : {}),
    },
    body: req.body,
    isBase64Encoded: req.isBase64Encoded ?? false,
  } as unknown as APIGatewayProxyEventV2;
}
