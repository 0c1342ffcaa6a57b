/** Lambda entry of the signal function: its clients and settings, built once per container. */
import { createDocumentClient, createS3Client, createSqsClient } from '../../lib/kernel/aws-clients.adapter.js';
import { systemClock } from '../../lib/kernel/clock.adapter.js';
import { parseEnv } from '../../lib/kernel/config.adapter.js';
import { createSignalHandler } from './create-handler.js';
import { SignalEnvSchema } from './env.js';

export const handler = createSignalHandler(
  parseEnv(SignalEnvSchema),
  { ddb: createDocumentClient(), s3: createS3Client(), sqs: createSqsClient() },
  systemClock,
);
