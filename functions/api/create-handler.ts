/**
 * api — the memory API behind API Gateway (HTTP API, payload 2.0): parse and validate the
 * request against contract.ts, authorise the caller (claims of the JWT authorizer; locally
 * the dev server verifies its own tokens and passes the same claims), call one use case,
 * answer JSON. Request bodies are never logged: they hold users' words.
 */
import { type RedactionPolicy, redactFields } from '../../lib/domain/redaction.js';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import httpRouterHandler from '@middy/http-router';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import type { z } from 'zod';
import type { AwsClients } from '../../lib/adapters/aws-clients.js';
import { S3DynamoBatchLogStore } from '../../lib/adapters/batch-log-store.js';
import { DynamoCostLedger } from '../../lib/adapters/dynamo-cost-ledger.js';
import { DynamoDiaryStore } from '../../lib/adapters/dynamo-diary-store.js';
import { DynamoGraphStore } from '../../lib/adapters/dynamo-graph-store.js';
import { DynamoSourceReliabilityStore } from '../../lib/adapters/dynamo-source-reliability.js';
import { DynamoS3SearchIndexStore, DynamoSearchChangeLog } from '../../lib/adapters/search-index-store.js';
import { S3DynamoTurnStore } from '../../lib/adapters/dynamo-turn-store.js';
import { KnowledgeRepository } from '../../lib/adapters/knowledge-repository.js';
import { createLogger } from '../../lib/adapters/logger.js';
import { StoreMemoryCatalog } from '../../lib/use-cases/memory-catalog.js';
import { DynamoAuditTrail, DynamoMemoryItemStore } from '../../lib/adapters/memory-item-store.js';
import { DynamoReflectionLogStore } from '../../lib/adapters/reflection-log-store.js';
import { S3DynamoReflectionStore } from '../../lib/adapters/reflection-store.js';
import { DynamoSignalStateStore } from '../../lib/adapters/dynamo-signal-state.js';
import { SqsJobQueue } from '../../lib/adapters/sqs-job-queue.js';
import { SqsAgentEventPublisher } from '../../lib/adapters/sqs-turn-publisher.js';
import { authorize, authorizeStage, type Principal, principalFromClaims } from '../../lib/domain/access.js';
import { parseSleepTimeConfig } from '../../lib/domain/sleep-time/config.js';
import type { Clock } from '../../lib/ports.js';
import * as api from '../../lib/use-cases/memory-api.js';
import * as corrections from '../../lib/use-cases/promote-staged.js';
import * as costs from '../../lib/use-cases/costs.js';
import * as diary from '../../lib/use-cases/diary.js';
import * as forget from '../../lib/use-cases/forget-user.js';
import * as archives from '../../lib/use-cases/user-archive.js';
import { DynamoS3UserArchiveStore } from '../../lib/adapters/user-archive-store.js';
import { DynamoForgetLog } from '../../lib/adapters/dynamo-forget-log.js';
import * as settings from '../../lib/use-cases/user-settings.js';
import { DynamoUserSettingsStore } from '../../lib/adapters/dynamo-user-settings.js';
import { LiveSearchIndex } from '../../lib/use-cases/search-index.js';
import * as graph from '../../lib/use-cases/relation-graph.js';
import * as facts from '../../lib/use-cases/knowledge-hygiene.js';
import { type OperationId, type Route, routes } from './contract.js';
import { consoleHtml } from './console.js';
import type { ApiEnv } from './env.js';
import { openApiDocument } from './openapi.js';
import { type Invoke, MCP_PATH, type OperationAnswer } from './invoke.js';

export type ApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2>;

/** The use cases' dependencies, over one set of stores. */
function apiDeps(env: ApiEnv, { ddb, s3, sqs }: Pick<AwsClients, 'ddb' | 's3' | 'sqs'>, clock: Clock): api.MemoryApiDeps {
  const { TABLE_NAME: table, BUCKET_NAME: bucket } = env;
  const changes = new DynamoSearchChangeLog(ddb, table);
  const turns = new S3DynamoTurnStore(ddb, s3, table, bucket, changes);
  const knowledge = new KnowledgeRepository(ddb, s3, table, bucket, changes);
  const reflections = new S3DynamoReflectionStore(ddb, s3, table, bucket, changes);
  const items = new DynamoMemoryItemStore(ddb, table, changes);
  const diary = new DynamoDiaryStore(ddb, table, changes);
  const stagedExpiryDays = parseSleepTimeConfig(env.SLEEP_TIME_CONFIG).stagedExpiryDays;
  const catalog = new StoreMemoryCatalog({ turns, knowledge, reflections, items, diary, stagedExpiryDays });
  return {
    catalog,
    // Built once per container (apiDeps runs in the handler factory): the index stays warm between requests.
    search: new LiveSearchIndex({ store: new DynamoS3SearchIndexStore(ddb, s3, table, bucket), catalog, clock }),
    items,
    diary,
    audit: new DynamoAuditTrail(ddb, table),
    turns,
    knowledge,
    reflections,
    runs: new DynamoReflectionLogStore(ddb, s3, table, bucket),
    batchLogs: new S3DynamoBatchLogStore(ddb, s3, table, bucket),
    sources: new DynamoSourceReliabilityStore(ddb, table, clock),
    graph: new DynamoGraphStore(ddb, table),
    jobs: new SqsJobQueue(sqs, env.REFLECTION_QUEUE_URL),
    events: new SqsAgentEventPublisher(sqs, env.TURN_QUEUE_URL),
    signalState: new DynamoSignalStateStore(ddb, table, clock),
    costs: new DynamoCostLedger(ddb, table),
    settings: new DynamoUserSettingsStore(ddb, table),
    forgets: new DynamoForgetLog(ddb, table),
    archives: new DynamoS3UserArchiveStore(ddb, s3, table, bucket),
    clock,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: each operation's input is validated by its route's schemas
type Input = { params: any; query: any; body: any; principal: Principal };
type Operation = (input: Input) => Promise<unknown>;

/** One implementation per route of the contract (the compiler checks none is missing). */
const operationsFor = (deps: api.MemoryApiDeps): Record<Exclude<OperationId, 'openapi' | 'console'>, Operation> => ({
  memorySearch: ({ params, body }) => api.search(deps, params.userId, body),
  memorySave: ({ params, body, principal }) => api.save(deps, principal.subject, params.userId, body),
  memoryRetrieve: ({ params, body }) => api.retrieve(deps, params.userId, body),
  tierCreate: ({ params, body, principal }) => api.createTierEntry(deps, principal.subject, params.userId, params.tier, body),
  tierQuery: ({ params, query }) => api.queryTier(deps, params.userId, params.tier, query),
  tierDelete: ({ params, principal }) => api.deleteTierEntry(deps, principal.subject, params.userId, params.tier, params.id),
  itemPromote: ({ params, body, principal }) => api.promote(deps, principal.subject, principal.admin, params.userId, params.id, body),
  itemDemote: ({ params, body, principal }) => api.demote(deps, principal.subject, params.userId, params.id, body),
  memoryOutcomes: ({ params, body, principal }) => api.recordOutcome(deps, principal.subject, params.userId, body),
  auditList: ({ params, query }) => api.auditTrail(deps, params.userId, query.itemId, query.limit),
  reflectionLog: ({ params, query }) => api.reflectionLog(deps, params.userId, query.limit),
  reflectionLatest: ({ params }) => api.latestReflection(deps, params.userId),
  reflectionAssessment: ({ params, query }) => api.assessment(deps, params.userId, query.days),
  summaryList: ({ params, query }) => api.listSummaries(deps, params.userId, query.includeDeleted === 'true'),
  summaryRequest: ({ params, body, principal }) => api.requestSummary(deps, principal.subject, params.userId, body),
  summaryEdit: ({ params, body, principal }) => api.editSummary(deps, principal.subject, params.userId, params.id, body),
  summaryDelete: ({ params, principal }) => api.deleteSummary(deps, principal.subject, params.userId, params.id),
  diaryList: ({ params, query }) => diary.listDiary(deps, params.userId, query),
  diaryOverride: ({ params, body, principal }) => diary.overrideDiary(deps, principal.subject, params.userId, params.id, body),
  reviewList: ({ params, query }) => api.listStagedForReview(deps, params.userId, { includeDecided: query.includeDecided === 'true', limit: query.limit, nextToken: query.nextToken }),
  reviewPromote: ({ params, body, principal }) => api.reviewPromote(deps, principal.subject, params.userId, body.path, body.reason),
  reviewDiscard: ({ params, body, principal }) => api.reviewDiscard(deps, principal.subject, params.userId, body.path, body.reason),
  batchList: ({ params, query }) => api.batches(deps, params.userId, query.limit),
  sourceReliability: ({ query }) => api.sourceReliability(deps, query.domains),
  capabilityConfidence: ({ params }) => api.capabilities(deps, params.userId),
  graphNeighbours: ({ params, query }) => graph.graphNeighbours(deps, params.userId, params.entity, query.includePruned === 'true'),
  graphEdgeCreate: ({ params, body, principal }) => graph.createGraphEdge(deps, principal.subject, params.userId, body),
  graphEdgeRestore: ({ params, body, principal }) => graph.restoreGraphEdge(deps, principal.subject, params.userId, body.id),
  knowledgeRestore: ({ params, body, principal }) => facts.restorePrunedFact(deps, principal.subject, params.userId, body.path),
  knowledgeRevert: ({ params, body, principal }) => corrections.revertKnowledgeChange(deps, principal.subject, params.userId, body.path, body.reason),
  reflectionQuality: ({ params }) => api.reflectionQualityOf(deps, params.userId),
  userCosts: ({ params, query }) => costs.userCosts(deps, params.userId, query.days),
  settingsRead: ({ params }) => settings.readSettings(deps, params.userId),
  settingsChange: ({ params, body, principal }) => settings.changeSettings(deps, principal.subject, params.userId, body),
  stageCosts: ({ query }) => costs.stageCosts(deps, query.days),
  graphEntitySplit: ({ params, principal }) => graph.splitGraphEntity(deps, principal.subject, params.userId, params.entity),
  graphLog: ({ params, query }) => graph.graphLog(deps, params.userId, query.limit),
  userForget: ({ params, principal }) => forget.requestForget(deps, principal.subject, params.userId),
  userForgetReceipt: ({ params }) => forget.forgetReceipt(deps, params.userId),
  userExport: ({ params }) => archives.exportUser(deps, params.userId),
  userImport: ({ params, body }) => archives.importUser(deps, params.userId, body.archive),
});

const json = (statusCode: number, body: unknown): APIGatewayProxyResultV2 => ({
  statusCode,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: JSON.stringify(body),
});
/** An error answer: `{"error": {"message", "fields"?}}` with its status. */
const problemOf = (status: number, message: string, fields?: Array<{ path: string; message: string }>): OperationAnswer => ({ status, body: { error: { message, ...(fields ? { fields } : {}) } } });
const problem = (statusCode: number, message: string, fields?: Array<{ path: string; message: string }>) => {
  const answer = problemOf(statusCode, message, fields);
  return json(answer.status, answer.body);
};

class BadRequest extends Error {
  constructor(readonly fields: Array<{ path: string; message: string }>) {
    super(`invalid request: ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}`);
  }
}

function parse(schema: z.ZodType | undefined, value: unknown, where: string): unknown {
  if (!schema) return undefined;
  const res = schema.safeParse(value);
  if (res.success) return res.data;
  throw new BadRequest(res.error.issues.map((i) => ({ path: [where, ...i.path.map(String)].join('.'), message: i.message })));
}

function bodyOf(event: APIGatewayProxyEventV2): unknown {
  if (event.body === undefined || event.body === '') return undefined;
  const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  try {
    return JSON.parse(text);
  } catch {
    throw new BadRequest([{ path: 'body', message: 'is not valid JSON' }]);
  }
}

const decoded = (params: Record<string, string | undefined> | undefined) => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params ?? {})) {
    if (v === undefined || k === 'proxy') continue;
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      throw new BadRequest([{ path: `params.${k}`, message: 'is not valid percent-encoding' }]);
    }
  }
  return out;
};

/** The OpenAPI document per server URL, generated once per container. */
const openApiByServer = new Map<string, Record<string, unknown>>();

/** The two public routes: the OpenAPI document and the review console's page. */
function publicPage(route: Route, event: APIGatewayProxyEventV2): APIGatewayProxyResultV2 {
  if (route.operationId === 'openapi') {
    const host = event.headers?.host;
    const server = host ? `${event.headers['x-forwarded-proto'] ?? 'https'}://${host}` : '';
    if (!openApiByServer.has(server)) openApiByServer.set(server, openApiDocument(server || undefined));
    return json(200, openApiByServer.get(server));
  }
  return { statusCode: 200, headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:" }, body: consoleHtml() };
}

type Operations = ReturnType<typeof operationsFor>;
type ApiLogger = ReturnType<typeof createLogger>['logger'];

function invokerFor(operations: Operations, logger: ApiLogger, redaction: RedactionPolicy): Invoke {
  return async (route, principal, input) => {
    try {
      // A stage route (access `admin`) has no path parameters.
      const params = (parse(route.params, input.params ?? {}, 'params') ?? {}) as { userId: string };
      const decision = route.access === 'admin' ? authorizeStage(principal) : authorize(principal, params.userId, route.access === 'write' ? 'write' : 'read');
      if (!decision.allowed) {
        logger.warn('request refused', { operation: route.operationId, subject: principal.subject, userId: params.userId, reason: decision.reason });
        return problemOf(403, decision.reason);
      }
      const query = parse(route.query, input.query ?? {}, 'query');
      // Issue 21 item 3: what a request would store (a saved memory, an edited summary, a prompt) is
      // redacted as a turn is; counts by kind, never the values.
      const redacted = redactFields(parse(route.body, input.body(), 'body'), redaction);
      if (Object.keys(redacted.counts).length > 0) logger.info('request redacted', { operation: route.operationId, redacted: redacted.counts });
      const op = operations[route.operationId as keyof Operations];
      return { status: 200, body: await op({ params, query, body: redacted.value, principal }) };
    } catch (error) {
      if (error instanceof BadRequest) return problemOf(400, error.message, error.fields);
      if (error instanceof api.MemoryApiError) return problemOf(error.status, error.message, error.fields);
      logger.error('request failed', { operation: route.operationId, error: error as Error });
      return problemOf(500, 'internal error');
    }
  };
}

/** A /v1 route: authenticate, then invoke its operation. */
async function serveOperation(route: Route, event: APIGatewayProxyEventV2, invoke: Invoke): Promise<APIGatewayProxyResultV2> {
  const principal = principalOf(event);
  if (!principal) return problem(401, 'a valid bearer token is required');
  const answer = await invoke(route, principal, { params: decoded(event.pathParameters), query: event.queryStringParameters ?? {}, body: () => bodyOf(event) });
  return json(answer.status, answer.body);
}

const principalOf = (event: APIGatewayProxyEventV2): Principal | null =>
  principalFromClaims((event.requestContext as { authorizer?: { jwt?: { claims?: Record<string, unknown> } } }).authorizer?.jwt?.claims);

export function createApiHandler(env: ApiEnv, clients: Pick<AwsClients, 'ddb' | 's3' | 'sqs'>, clock: Clock): ApiHandler {
  const { logger } = createLogger('api');
  const operations = operationsFor(apiDeps(env, clients, clock));
  const invoke = invokerFor(operations, logger, { personalData: env.REDACT_PERSONAL_DATA === 'true' });
  const router = httpRouterHandler({
    routes: (routes as readonly Route[]).map((route) => ({
      method: route.method,
      path: route.path,
      handler: (event: APIGatewayProxyEventV2) =>
        route.operationId === 'openapi' || route.operationId === 'console' ? Promise.resolve(publicPage(route, event)) : serveOperation(route, event, invoke),
    })),
    // The router returns what this returns (its type says it must throw).
    notFoundResponse: (({ method, path }: { method: string; path: string }) => problem(404, `no route ${method} ${path}`)) as unknown as (args: { method: string; path: string }) => never,
  });
  // MCP (issue 21 item 4): POST /v1/mcp, the same bearer token as every /v1 route.
  const serve = async (event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyResultV2> => {
    if (event.rawPath !== MCP_PATH) return router(event, context) as Promise<APIGatewayProxyResultV2>;
    const principal = principalOf(event);
    if (!principal) return problem(401, 'a valid bearer token is required');
    // Loaded on the first MCP request: the SDK (and the JSON Schema validator it brings) costs
    // every other request nothing at init.
    const { serveMcp } = await import('./mcp.js');
    return serveMcp(event, principal, invoke);
  };
  return middy<APIGatewayProxyEventV2, APIGatewayProxyResultV2, Error, Context>()
    .use(injectLambdaContext(logger))
    .handler(serve) as unknown as ApiHandler;
}
