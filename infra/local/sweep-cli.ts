/**
 * npm run sweep -- nightly|weekly|expiry [--time ISO]
 * Runs one sweep by hand against the running local harness (.local/stack.json): the sweep
 * function the schedules invoke, built by its handler factory with the stack's environment
 * for it, with "now" = --time (default: the wall clock). The jobs it fans out go to the
 * stack's job queue and are run there. A batch inference job it starts is run at once by
 * the batch inference stand-in, and its end delivered to the same sweep function.
 */
import { parseArgs } from 'node:util';
import { createSweepHandler } from '../../functions/sweep/create-handler.js';
import { SweepEnvSchema } from '../../functions/sweep/env.js';
import { createDocumentClient, createS3Client, createSqsClient } from '../../lib/kernel/aws-clients.adapter.js';
import { systemClock } from '../../lib/kernel/clock.adapter.js';
import { parseEnv } from '../../lib/kernel/config.adapter.js';
import { FUNCTION_TIMEOUT_SECONDS } from '../resources.js';
import { createBatchInferenceStandIn } from './batch-inference-stand-in.js';
import { lambdaContext } from './lambda-context.js';
import { readStackInfo } from './stack-info.js';

const { values, positionals } = parseArgs({ options: { time: { type: 'string' } }, allowPositionals: true });
const sweep = positionals[0];
if (!sweep || !['nightly', 'weekly', 'expiry'].includes(sweep)) {
  console.error('usage: npm run sweep -- nightly|weekly|expiry [--time 2026-02-07T03:00:00Z]');
  process.exit(2);
}
const info = readStackInfo();
Object.assign(process.env, {
  AWS_REGION: info.region,
  AWS_ACCESS_KEY_ID: info.credentials.accessKeyId,
  AWS_SECRET_ACCESS_KEY: info.credentials.secretAccessKey,
  AWS_ENDPOINT_URL_DYNAMODB: info.endpoints.dynamodb,
  AWS_ENDPOINT_URL_SQS: info.endpoints.sqs,
  AWS_ENDPOINT_URL_S3: info.endpoints.s3,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  POWERTOOLS_LOG_LEVEL: 'WARN',
  POWERTOOLS_METRICS_DISABLED: 'true',
});
const batchInference = createBatchInferenceStandIn({ s3: createS3Client(), region: info.region });
const handler = createSweepHandler(
  parseEnv(SweepEnvSchema, info.environments.sweep),
  { ddb: createDocumentClient(), s3: createS3Client(), sqs: createSqsClient(), bedrockBatch: batchInference.client },
  systemClock,
);
const context = () => lambdaContext('local-sweep', FUNCTION_TIMEOUT_SECONDS.sweep);
console.log(
  JSON.stringify(await handler({ sweep, ...(values.time ? { time: values.time } : {}) }, context()), null, 2),
);
for (const change of await batchInference.run()) console.log(JSON.stringify(await handler(change, context()), null, 2));
process.exit(0);
