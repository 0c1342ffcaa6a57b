/**
 * AWS SDK v3 clients, created once per container by each Lambda entry (functions/<name>/
 * handler.ts) and handed to the function's handler factory. Nothing here is a test hook:
 * the local harness builds its own clients (infra/local/clients.ts) with the same settings
 * plus its middlewares (request ledger, fault injection, IAM enforcement).
 *
 * Endpoints follow the SDK's standard settings (`AWS_ENDPOINT_URL_<SERVICE>` or
 * `AWS_ENDPOINT_URL`), passed to the constructors explicitly: SQS's queue URLs from
 * emulators name hosts that do not resolve, so the endpoint must win over the queue URL's host.
 */
import { BedrockClient } from '@aws-sdk/client-bedrock';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

type Service = 'DYNAMODB' | 'S3' | 'SQS' | 'BEDROCK_RUNTIME' | 'BEDROCK';

export function endpointFor(service: Service, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[`AWS_ENDPOINT_URL_${service}`] ?? env.AWS_ENDPOINT_URL ?? undefined;
}

/** The clients a function's handler factory takes; each function is given the ones it uses. */
export interface AwsClients {
  ddb: DynamoDBDocumentClient;
  s3: S3Client;
  sqs: SQSClient;
  bedrock: BedrockRuntimeClient;
  /** Bedrock's control plane: the sweep's batch inference jobs (lib/batch-inference). */
  bedrockBatch: BedrockClient;
}

export function createDynamoDbClient(): DynamoDBClient {
  return new DynamoDBClient({ endpoint: endpointFor('DYNAMODB') });
}

/** The document client over `base` (default: a new DynamoDBClient), dropping undefined values. */
export function createDocumentClient(base: DynamoDBClient = createDynamoDbClient()): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
}

export function createS3Client(): S3Client {
  const endpoint = endpointFor('S3');
  // Path-style addressing for emulators on localhost (bucket.localhost does not resolve everywhere).
  return new S3Client({ endpoint, forcePathStyle: endpoint !== undefined });
}

export function createSqsClient(): SQSClient {
  return new SQSClient({ endpoint: endpointFor('SQS') });
}

/** Attempts per model call: the first and three retries of a throttled, timed-out or 5xx call. */
export const BEDROCK_MAX_ATTEMPTS = 4;
/** A model call that has not answered in this long is abandoned (and retried): 1,500–3,000 output tokens take seconds. */
export const BEDROCK_REQUEST_TIMEOUT_MS = 60_000;

export function createBedrockClient(): BedrockRuntimeClient {
  // Bedrock's quotas are per minute; AWS advises retrying a throttled call with exponential
  // backoff and jitter (https://docs.aws.amazon.com/bedrock/latest/userguide/troubleshooting-api-error-codes.html),
  // which the SDK's standard retry mode does (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html:
  // 3 attempts by default; throttling errors back off from a 500 ms base). A throttling episode
  // longer than one delivery's attempts is outlasted by the reflection queue's redeliveries
  // (infra/resources.ts). Without a request timeout a hung call would run until Lambda's.
  return new BedrockRuntimeClient({
    endpoint: endpointFor('BEDROCK_RUNTIME'),
    maxAttempts: BEDROCK_MAX_ATTEMPTS,
    retryMode: 'standard',
    requestHandler: { requestTimeout: BEDROCK_REQUEST_TIMEOUT_MS },
  });
}

/** Bedrock's control plane (`bedrock`, not `bedrock-runtime`): CreateModelInvocationJob for sleep-time at batch prices. */
export function createBedrockBatchClient(): BedrockClient {
  return new BedrockClient({ endpoint: endpointFor('BEDROCK') });
}
