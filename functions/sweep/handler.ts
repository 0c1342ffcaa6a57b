/** Lambda entry of the sweep function: its clients and settings, built once per container. */
import {
  createBedrockBatchClient,
  createDocumentClient,
  createS3Client,
  createSqsClient,
} from '../../lib/kernel/aws-clients.adapter.js';
import { systemClock } from '../../lib/kernel/clock.adapter.js';
import { parseEnv } from '../../lib/kernel/config.adapter.js';
import { createSweepHandler } from './create-handler.js';
import { SweepEnvSchema } from './env.js';

export const handler = createSweepHandler(
  parseEnv(SweepEnvSchema),
  {
    ddb: createDocumentClient(),
    s3: createS3Client(),
    sqs: createSqsClient(),
    bedrockBatch: createBedrockBatchClient(),
  },
  systemClock,
);
