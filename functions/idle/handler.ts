/** Lambda entry of the idle function: its clients and settings, built once per container. */
import { createDocumentClient, createS3Client, createSqsClient } from '../../lib/kernel/aws-clients.adapter.js';
import { systemClock } from '../../lib/kernel/clock.adapter.js';
import { parseEnv } from '../../lib/kernel/config.adapter.js';
import { createIdleHandler } from './create-handler.js';
import { IdleEnvSchema } from './env.js';

export const handler = createIdleHandler(
  parseEnv(IdleEnvSchema),
  { ddb: createDocumentClient(), s3: createS3Client(), sqs: createSqsClient() },
  systemClock,
);
