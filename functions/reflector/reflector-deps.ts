/**
 * The reflector's dependencies over the AWS stores: the stores its use cases share over one
 * table and one bucket, and the deps of each job family (reflection, summary, sleep-time,
 * forget) that lib/jobs/run-job.ts dispatches to.
 */
import type { AwsClients } from '../../lib/kernel/aws-clients.adapter.js';
import type { Storage } from '../../lib/kernel/storage.adapter.js';
import { DynamoTurnLog } from '../../lib/search/dynamo-turn-log.adapter.js';
import { DynamoS3BatchLogStore } from '../../lib/batches/batch-log-store.adapter.js';
import { BedrockConverseModel } from '../../lib/model/bedrock-converse-model.adapter.js';
import { DynamoGraphStore } from '../../lib/graph/dynamo-graph-store.adapter.js';
import { DynamoSignalStateStore } from '../../lib/signals/dynamo-signal-state-store.adapter.js';
import { DynamoSourceReliabilityStore } from '../../lib/sources/dynamo-source-reliability-store.adapter.js';
import { DynamoS3SearchIndexStore } from '../../lib/search/search-index-store.adapter.js';
import { DynamoAuditTrail } from '../../lib/items/memory-item-store.adapter.js';
import { tierEntries } from '../../lib/tiers/tier-entries.js';
import { DynamoCostLedger } from '../../lib/costs/dynamo-cost-ledger.adapter.js';
import { DynamoUserSettingsStore } from '../../lib/settings/dynamo-user-settings-store.adapter.js';
import { DynamoSleepTimeLogStore } from '../../lib/sleep-time/sleep-time-log-store.adapter.js';
import { DynamoS3SummarySource } from '../../lib/summaries/summary-source.adapter.js';
import { SqsJobQueue } from '../../lib/jobs/sqs-job-queue.adapter.js';
import { parseSleepTimeConfig } from '../../lib/sleep-time/config.js';
import { parseTierPolicy } from '../../lib/tiers/tier-settings.js';
import type { Clock, Log } from '../../lib/kernel/runtime.port.js';
import type { ReflectionDeps } from '../../lib/batches/reflection-deps.js';
import type { JobDeps } from '../../lib/jobs/run-job.js';
import type { SleepTimeDeps } from '../../lib/sleep-time/run-sleep-time.js';
import type { SummaryDeps } from '../../lib/summaries/run-summary.js';
import { LiveSearchIndex } from '../../lib/search/search-index.js';
import type { SearchIndexReader } from '../../lib/search/search-index-reader.js';
import { embeddingModelOf } from '../../lib/model/titan-embeddings.adapter.js';
import { DynamoForgetLog } from '../../lib/forget/dynamo-forget-log.adapter.js';
import { DynamoErasureLog } from '../../lib/forget/dynamo-erasure-log.adapter.js';
import { DynamoS3UserEraser } from '../../lib/forget/user-eraser.adapter.js';
import type { ReflectorEnv } from './env.js';
import { S3DeferredReflections } from '../../lib/batch-inference/deferred-reflections.adapter.js';
import { catalogStores } from '../../lib/search/catalog-stores.adapter.js';

export type Clients = Pick<AwsClients, 'ddb' | 's3' | 'sqs' | 'bedrock'>;

/** The job dispatcher's dependencies and the search index the handler compacts after a job. */
export type ReflectorDeps = JobDeps & { search: Pick<SearchIndexReader, 'compact'> };

/** The stores the reflector's use cases share, over one table and one bucket. */
function sharedStores(env: ReflectorEnv, storage: Storage, { bedrock }: Clients, clock: Clock, log: Log) {
  const stagedExpiryDays = parseSleepTimeConfig(env.SLEEP_TIME_CONFIG).stagedExpiryDays;
  const { turns, knowledge, summaries, items, diary, catalog } = catalogStores(storage, stagedExpiryDays);
  // A stage that embeds stores the vectors of the items each compaction folds.
  const search = new LiveSearchIndex({
    store: new DynamoS3SearchIndexStore(storage),
    catalog,
    clock,
    embeddings: embeddingModelOf(bedrock, env),
    marks: { lagMs: env.SEARCH_MARK_LAG_SECONDS * 1000 },
    turns: new DynamoTurnLog(storage),
  });
  const models = new Map<string, BedrockConverseModel>();
  const modelOf = (id: string = env.MODEL_ID): BedrockConverseModel => {
    const model = models.get(id) ?? new BedrockConverseModel(bedrock, id, { answerShape: env.ANSWER_SHAPE, log });
    models.set(id, model);
    return model;
  };
  const costs = new DynamoCostLedger(storage);
  const graph = new DynamoGraphStore(storage);
  // Batches run on MODEL_ID; summaries and sleep-time runs on their own model when the stage gives them one.
  // Req R-DEL: tombstones the gates consult, and the turns forgotten by provenance, which drop a job citing them.
  const erasures = new DynamoErasureLog(storage);
  return {
    storage,
    turns,
    knowledge,
    summaries,
    items,
    diary,
    search,
    costs,
    graph,
    erasures,
    model: modelOf(),
    summaryModel: modelOf(env.SUMMARY_MODEL_ID),
    sleepTimeModel: modelOf(env.SLEEP_TIME_MODEL_ID),
  };
}
type Stores = ReturnType<typeof sharedStores>;

function reflectionDeps(env: ReflectorEnv, stores: Stores, clock: Clock, log: Log): ReflectionDeps {
  const { storage, turns, knowledge, graph, costs, diary, model, erasures, items } = stores;
  const tierPolicy = parseTierPolicy(env.TIER_POLICY);
  const audit = new DynamoAuditTrail(storage);
  return {
    erasures,
    tierPolicy,
    audit,
    // Req R-TIER-11: staged and recurring items enter the short-term tier as API writes do (audited alike).
    tiers: tierEntries({
      clock,
      items,
      audit,
      turns,
      tierPolicy,
    }),
    turns,
    signalState: new DynamoSignalStateStore(storage, clock),
    knowledge,
    batchLogs: new DynamoS3BatchLogStore(storage),
    sources: new DynamoSourceReliabilityStore(storage, clock),
    graph,
    costs,
    diary,
    model,
    clock,
    log,
    settings: {
      temperature: env.MODEL_TEMPERATURE,
      maxTokens: env.MODEL_MAX_TOKENS,
      budgetTokens: env.BATCH_TOKEN_BUDGET,
    },
    ...(env.ROUTINE_BATCH_INFERENCE ? { deferred: new S3DeferredReflections(storage) } : {}),
  };
}

function summaryDeps(
  env: ReflectorEnv,
  { storage, turns, summaries, costs, summaryModel: model }: Stores,
  clock: Clock,
  log: Log,
): SummaryDeps {
  return {
    turns,
    summaries,
    costs,
    settings: new DynamoUserSettingsStore(storage),
    model,
    clock,
    log,
    defaults: { enabled: env.SUMMARIES_ENABLED, prompt: env.SUMMARY_PROMPT, maxTokens: env.SUMMARY_MAX_TOKENS },
    temperature: env.MODEL_TEMPERATURE,
    budgetTokens: env.BATCH_TOKEN_BUDGET,
  };
}

function sleepTimeDeps(
  env: ReflectorEnv,
  { storage, turns, knowledge, graph, items, costs, erasures, sleepTimeModel: model }: Stores,
  clock: Clock,
  log: Log,
): SleepTimeDeps {
  return {
    erasures,
    turns,
    knowledge,
    runs: new DynamoSleepTimeLogStore(storage),
    summaries: new DynamoS3SummarySource(storage),
    graph,
    items,
    costs,
    model,
    clock,
    log,
    config: parseSleepTimeConfig(env.SLEEP_TIME_CONFIG),
    tierPolicy: parseTierPolicy(env.TIER_POLICY),
  };
}

/** The job dispatcher's dependencies over the AWS stores. */
export function reflectorDeps(
  env: ReflectorEnv,
  storage: Storage,
  clients: Clients,
  clock: Clock,
  log: Log,
): ReflectorDeps {
  const stores = sharedStores(env, storage, clients, clock, log);
  const forgets = new DynamoForgetLog(stores.storage);
  const eraser = new DynamoS3UserEraser(stores.storage, { pageSize: env.FORGET_PAGE_SIZE });
  const jobs = new SqsJobQueue(clients.sqs, env.JOB_QUEUE_URL);
  return {
    reflection: reflectionDeps(env, stores, clock, log),
    summary: summaryDeps(env, stores, clock, log),
    sleepTime: sleepTimeDeps(env, stores, clock, log),
    search: stores.search,
    forgets,
    erasures: stores.erasures,
    // A forget's continuation goes on the reflector's own queue (lib/forget/forget-user.ts).
    forget: (remainingMs) => ({
      forgets,
      eraser,
      search: stores.search,
      clock,
      log,
      settleSeconds: env.FORGET_SETTLE_SECONDS,
      remainingMs,
      jobs,
      pagesPerJob: env.FORGET_PAGES_PER_JOB,
    }),
    log,
  };
}
