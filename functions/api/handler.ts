/** Lambda entry of the api function: its clients and settings, built once per container. */
import {
  createBedrockClient,
  createDocumentClient,
  createS3Client,
  createSqsClient,
} from '../../lib/kernel/aws-clients.adapter.js';
import { systemClock } from '../../lib/kernel/clock.adapter.js';
import { parseEnv } from '../../lib/kernel/config.adapter.js';
import { createApiHandler } from './create-handler.js';
import { ApiEnvSchema } from './env.js';

export const handler = createApiHandler(
  parseEnv(ApiEnvSchema),
  { ddb: createDocumentClient(), s3: createS3Client(), sqs: createSqsClient(), bedrock: createBedrockClient() },
  systemClock,
);
