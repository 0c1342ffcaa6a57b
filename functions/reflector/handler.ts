/** Lambda entry of the reflector function: its clients and settings, built once per container. */
import {
  createBedrockClient,
  createDocumentClient,
  createS3Client,
  createSqsClient,
} from '../../lib/kernel/aws-clients.adapter.js';
import { systemClock } from '../../lib/kernel/clock.adapter.js';
import { parseEnv } from '../../lib/kernel/config.adapter.js';
import { createReflectorHandler } from './create-handler.js';
import { ReflectorEnvSchema } from './env.js';

export const handler = createReflectorHandler(
  parseEnv(ReflectorEnvSchema),
  { ddb: createDocumentClient(), s3: createS3Client(), sqs: createSqsClient(), bedrock: createBedrockClient() },
  systemClock,
);
