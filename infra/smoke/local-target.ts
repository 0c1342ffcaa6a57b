/**
 * A smoke target on the local harness: its queues, bucket and API from `StackInfo` (what
 * `.local/stack.json` holds while `npm start` runs), clients on its emulator endpoints, and
 * a local user-scoped token. The integration test and `npm run smoke -- --local` use it.
 */
import { BedrockClient } from '@aws-sdk/client-bedrock';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { NodeHttp2Handler } from '@smithy/node-http-handler';
import type { StackInfo } from '../local/harness.js';
import { names, QUEUES, type QueueKey } from '../resources.js';
import { stageModels } from './preflight.js';
import type { ModelAccess, SmokeQueue, SmokeTarget } from './target.js';

/**
 * The models the stack's reflector invokes (its environment), checked against the local
 * Converse stand-in, which also answers GetFoundationModel (infra/local/foundation-models.ts).
 * The stand-in speaks HTTP/2 only: the control plane's client, HTTP/1.1 by default, is given
 * the SDK's HTTP/2 handler.
 */
function localModels(info: StackInfo): ModelAccess {
  const env = info.environments.reflector;
  const common = { region: info.region, credentials: info.credentials, endpoint: info.endpoints.bedrock };
  return {
    region: info.region,
    models: stageModels({
      batches: env.MODEL_ID ?? info.modelId,
      summaries: env.SUMMARY_MODEL_ID,
      sleepTime: env.SLEEP_TIME_MODEL_ID,
      embeddings: env.EMBEDDING_MODEL_ID,
    }),
    runtime: new BedrockRuntimeClient(common),
    control: new BedrockClient({ ...common, requestHandler: new NodeHttp2Handler() }),
  };
}

/** `mint(users)`: a token for these users only (the local harness's `mintUserToken`). */
export function localTarget(info: StackInfo, mint: (users: readonly string[]) => Promise<string>): SmokeTarget {
  const common = { region: info.region, credentials: info.credentials };
  const n = names(info.stage);
  const queues = Object.fromEntries(
    (Object.keys(QUEUES) as QueueKey[]).map((key): [QueueKey, SmokeQueue] => [
      key,
      {
        name: n.queue(QUEUES[key]),
        url: info.queues[key].url,
        dlqName: n.dlq(QUEUES[key]),
        dlqUrl: info.queues[key].dlqUrl,
      },
    ]),
  ) as Record<QueueKey, SmokeQueue>;
  const where = "the local harness's output (handler errors on stderr; `npm start -- --verbose` for INFO logs)";
  return {
    label: `local harness ${info.stage}`,
    sqs: new SQSClient({ ...common, endpoint: info.endpoints.sqs }),
    s3: new S3Client({ ...common, endpoint: info.endpoints.s3, forcePathStyle: true }),
    bucketName: info.bucketName,
    apiUrl: info.apiUrl,
    queues,
    auth: {
      token: async (userId) => ({ token: await mint([userId]), detail: `a local token scoped to ${userId}` }),
      cleanup: async () => null,
    },
    logs: { signal: where, reflector: where, idle: where, api: where },
    models: localModels(info),
  };
}
