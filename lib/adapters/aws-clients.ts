/**
 * AWS SDK v3 clients, created once per process (module scope in the handlers) and
 * injectable for tests. Locally the same code talks to emulators through the SDK's
 * standard endpoint settings (`AWS_ENDPOINT_URL_<SERVICE>` or `AWS_ENDPOINT_URL`), passed
 * to the constructors explicitly: SQS's queue URLs from emulators name hosts that do not
 * resolve, so the endpoint must win over the queue URL's host.
 */
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { injectFaults } from './fault-injection.js';
import { instrument } from './request-ledger.js';

type Service = 'DYNAMODB' | 'S3' | 'SQS' | 'BEDROCK_RUNTIME';

export function endpointFor(service: Service, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[`AWS_ENDPOINT_URL_${service}`] ?? env.AWS_ENDPOINT_URL ?? undefined;
}

export function createDocumentClient(client?: DynamoDBClient): DynamoDBDocumentClient {
  const base = client ?? injectFaults(instrument(new DynamoDBClient({ endpoint: endpointFor('DYNAMODB') }), 'DynamoDB'), 'DynamoDB');
  return DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
}

export function createS3Client(): S3Client {
  const endpoint = endpointFor('S3');
  // Path-style addressing for emulators on localhost (bucket.localhost does not resolve everywhere).
  return injectFaults(instrument(new S3Client({ endpoint, forcePathStyle: endpoint !== undefined }), 'S3'), 'S3');
}

export function createSqsClient(): SQSClient {
  return injectFaults(instrument(new SQSClient({ endpoint: endpointFor('SQS') }), 'SQS'), 'SQS');
}

export function createBedrockClient(): BedrockRuntimeClient {
  // One attempt per delivery: the retry policy of seed 000 §9 ("retry once") is the
  // reflection queue's redelivery after its visibility timeout, not the SDK's backoff.
  return injectFaults(instrument(new BedrockRuntimeClient({ endpoint: endpointFor('BEDROCK_RUNTIME'), maxAttempts: 1 }), 'BedrockRuntime'), 'BedrockRuntime');
}
