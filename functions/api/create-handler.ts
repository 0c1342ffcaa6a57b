/**
 * api — the memory API behind API Gateway (HTTP API, payload 2.0): the use cases over the
 * AWS stores, served by the one dispatcher of routes.ts (parse and validate the request
 * against contract.ts, authorise the caller — claims of the JWT authorizer; locally the dev
 * server verifies its own tokens and passes the same claims —, call one use case, answer
 * JSON). Request bodies are never logged: they hold users' words.
 */
import { DynamoTurnLog } from '../../lib/search/dynamo-turn-log.adapter.js';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import type { AwsClients } from '../../lib/kernel/aws-clients.adapter.js';
import type { Storage } from '../../lib/kernel/storage.adapter.js';
import { DynamoS3BatchLogStore } from '../../lib/batches/batch-log-store.adapter.js';
import { DynamoCostLedger } from '../../lib/costs/dynamo-cost-ledger.adapter.js';
import { DynamoGraphStore } from '../../lib/graph/dynamo-graph-store.adapter.js';
import { DynamoSourceReliabilityStore } from '../../lib/sources/dynamo-source-reliability-store.adapter.js';
import { DynamoS3SearchIndexStore, DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { createLogger } from '../../lib/kernel/logger.adapter.js';
import { catalogStores } from '../../lib/search/catalog-stores.adapter.js';
import { DynamoAuditTrail, } from '../../lib/items/memory-item-store.adapter.js';
import { DynamoSleepTimeLogStore } from '../../lib/sleep-time/sleep-time-log-store.adapter.js';
import { DynamoSignalStateStore } from '../../lib/signals/dynamo-signal-state-store.adapter.js';
import { SqsJobQueue } from '../../lib/jobs/sqs-job-queue.adapter.js';
import { SqsAgentEventPublisher } from '../../lib/turns/sqs-turn-publisher.adapter.js';
import { parseTierPolicy } from '../../lib/tiers/tier-settings.js';
import { parseSleepTimeConfig } from '../../lib/sleep-time/config.js';
import type { Clock, Log } from '../../lib/kernel/runtime.port.js';
import type * as api from '../../lib/memory-api/memory-api.js';
import { DynamoS3UserArchiveStore } from '../../lib/archive/user-archive-store.adapter.js';
import { DynamoForgetLog } from '../../lib/forget/dynamo-forget-log.adapter.js';
import { DynamoErasureLog } from '../../lib/forget/dynamo-erasure-log.adapter.js';
import { DynamoS3ItemEraser } from '../../lib/forget/item-eraser.adapter.js';
import { DynamoUserSettingsStore } from '../../lib/settings/dynamo-user-settings-store.adapter.js';
import { LiveSearchIndex } from '../../lib/search/search-index.js';
import { embeddingModelOf } from '../../lib/model/titan-embeddings.adapter.js';
import type { ApiEnv } from './env.js';
import { apiRoutes } from './routes.js';

export type ApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2>;

/** The use cases' dependencies, over one set of stores. */
function apiDeps(
  env: ApiEnv,
  { ddb, s3, sqs, bedrock }: Pick<AwsClients, 'ddb' | 's3' | 'sqs' | 'bedrock'>,
  clock: Clock,
  log: Log,
): api.MemoryApiDeps {
  const table = { ddb, tableName: env.TABLE_NAME };
  // Marks without a TTL: an owner only the API writes is compacted only when searched, so its
  // marks wait for that, and the compaction that folds them gives them a TTL (docs/search-index.md).
  const storage: Storage = { ...table, s3, bucketName: env.BUCKET_NAME, changes: new DynamoSearchChangeLog(table) };
  const stagedExpiryDays = parseSleepTimeConfig(env.SLEEP_TIME_CONFIG).stagedExpiryDays;
  const { turns, knowledge, summaries, items, diary, trust, catalog } = catalogStores(storage, stagedExpiryDays);
  // A stage that embeds embeds each query, and the deltas the API compacts.
  const embeddings = embeddingModelOf(bedrock, env);
  return {
    catalog,
    // Built once per container (apiDeps runs in the handler factory): the index stays warm between requests.
    search: new LiveSearchIndex({
      store: new DynamoS3SearchIndexStore(storage),
      catalog,
      clock,
      embeddings,
      marks: { lagMs: env.SEARCH_MARK_LAG_SECONDS * 1000 },
      turns: new DynamoTurnLog(storage),
    }),
    embeddings,
    items,
    trust,
    diary,
    audit: new DynamoAuditTrail(storage),
    turns,
    knowledge,
    summaries,
    runs: new DynamoSleepTimeLogStore(storage),
    batchLogs: new DynamoS3BatchLogStore(storage),
    sources: new DynamoSourceReliabilityStore(storage, clock),
    graph: new DynamoGraphStore(storage),
    jobs: new SqsJobQueue(sqs, env.JOB_QUEUE_URL),
    events: new SqsAgentEventPublisher(sqs, env.TURN_QUEUE_URL),
    signalState: new DynamoSignalStateStore(storage, clock),
    costs: new DynamoCostLedger(storage),
    settings: new DynamoUserSettingsStore(storage),
    forgets: new DynamoForgetLog(storage),
    archives: new DynamoS3UserArchiveStore(storage),
    erasures: new DynamoErasureLog(storage),
    eraser: new DynamoS3ItemEraser(storage),
    clock,
    tierPolicy: parseTierPolicy(env.TIER_POLICY),
    log,
  };
}

export function createApiHandler(
  env: ApiEnv,
  clients: Pick<AwsClients, 'ddb' | 's3' | 'sqs' | 'bedrock'>,
  clock: Clock,
): ApiHandler {
  const { logger, log } = createLogger('api');
  // The stage on every line: the StaleSearchIndex metric filter publishes it as the metric's `stage` dimension (infra/constructs/stage-alarms.ts).
  logger.appendPersistentKeys({ stage: env.STAGE });
  const dispatch = apiRoutes(apiDeps(env, clients, clock, log), {
    log,
    redaction: { personalData: env.REDACT_PERSONAL_DATA === 'true' },
  });
  return middy<APIGatewayProxyEventV2, APIGatewayProxyResultV2, Error, Context>()
    .use(injectLambdaContext(logger))
    .handler(dispatch) as unknown as ApiHandler;
}
