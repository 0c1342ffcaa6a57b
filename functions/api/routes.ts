/**
 * The api function's one dispatcher: route an HTTP API (payload 2.0) event to its operation —
 * authenticate (claims of the JWT authorizer), parse and validate the request against
 * contract.ts, authorise the caller, redact what it would store, call one use case — and map
 * every outcome to its HTTP status (400 invalid input, 401 no principal, 403 refused, 404 no
 * route, the use case's own error status, 500 anything else). The Lambda handler
 * (create-handler.ts, over the AWS stores), the local harness (through that handler) and the
 * fuzzer (bench/fuzz-targets.ts, over recording fakes) all call this. Request bodies are never
 * logged: they hold users' words.
 */
import httpRouterHandler from '@middy/http-router';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import type { z } from 'zod';
import { authorize, authorizeStage, type Principal, principalFromClaims } from '../../lib/memory-api/access.js';
import { type RedactionPolicy, redactFields } from '../../lib/turns/redaction.js';
import type { Log } from '../../lib/kernel/runtime.port.js';
import * as costs from '../../lib/costs/costs.js';
import * as diary from '../../lib/diary/diary-api.js';
import * as forget from '../../lib/forget/forget-user.js';
import * as facts from '../../lib/knowledge/maintain-facts.js';
import * as api from '../../lib/memory-api/memory-api.js';
import * as corrections from '../../lib/knowledge/promote-staged.js';
import * as graph from '../../lib/graph/graph-use-cases.js';
import * as rebuilds from '../../lib/search/search-rebuild.js';
import * as archives from '../../lib/archive/archive-api.js';
import * as settings from '../../lib/settings/settings-api.js';
import { consolePage } from './console.js';
import { type OperationId, type Route, routes } from './contract.js';
import type { knowledgeRoutes } from './contract/knowledge.js';
import type { memoryRoutes } from './contract/memory.js';
import type { reflectionRoutes } from './contract/reflections.js';
import type { userRoutes } from './contract/users.js';
import { type Invoke, MCP_PATH, type OperationAnswer } from './invoke.js';
import { openApiDocument } from './openapi.js';

/** What the api function answers an HTTP API event with. */
export type ApiDispatch = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2>;

export interface ApiRouteOptions {
  /** Where refusals, redactions and failures are logged (never a request body). */
  log: Log;
  /** What a request would store is redacted as a turn is. */
  redaction: RedactionPolicy;
}

// biome-ignore lint/suspicious/noExplicitAny: each operation's input is validated by its route's schemas
type Input = { params: any; query: any; body: any; principal: Principal };
type Operation = (input: Input) => Promise<unknown>;

/** The operations of one route group of the contract (functions/api/contract/). */
type GroupOperations<R extends readonly Route[]> = Record<
  Exclude<R[number]['operationId'], 'openapi' | 'console'>,
  Operation
>;

/** The search, save, retrieve, tiers, item changes, outcomes, the audit trail. */
const memoryOperations = (deps: api.MemoryApiDeps): GroupOperations<typeof memoryRoutes> => ({
  memorySearch: ({ params, body }) => api.search(deps, params.userId, body),
  memorySave: ({ params, body, principal }) => api.save(deps, principal.subject, params.userId, body),
  memoryRetrieve: ({ params, body }) => api.retrieve(deps, params.userId, body),
  tierCreate: ({ params, body, principal }) =>
    api.createTierEntry(deps, principal.subject, params.userId, params.tier, body),
  tierQuery: ({ params, query }) => api.queryTier(deps, params.userId, params.tier, query),
  tierDelete: ({ params, principal }) =>
    api.deleteTierEntry(deps, principal.subject, params.userId, params.tier, params.id),
  itemPromote: ({ params, body, principal }) =>
    api.promote(deps, principal.subject, principal.admin, params.userId, params.id, body),
  itemDemote: ({ params, body, principal }) => api.demote(deps, principal.subject, params.userId, params.id, body),
  itemContradict: ({ params, body, principal }) =>
    api.contradictItem(deps, principal.subject, params.userId, params.id, body),
  itemContradictUndo: ({ params, principal }) =>
    api.undoContradiction(deps, principal.subject, params.userId, params.id),
  itemEdit: ({ params, body, principal }) => api.editItem(deps, principal.subject, params.userId, params.id, body),
  itemRestore: ({ params, body, principal }) =>
    api.restoreItem(deps, principal.subject, params.userId, params.id, body),
  memoryOutcomes: ({ params, body, principal }) => api.recordOutcome(deps, principal.subject, params.userId, body),
  auditList: ({ params, query }) => api.auditTrail(deps, params.userId, query.itemId, query.limit),
});

/** The sleep-time runs, summaries, the diary, staged items. */
const reflectionOperations = (deps: api.MemoryApiDeps): GroupOperations<typeof reflectionRoutes> => ({
  sleepTimeRuns: ({ params, query }) => api.sleepTimeRuns(deps, params.userId, query.limit),
  sleepTimeLatest: ({ params }) => api.latestSleepTimeRun(deps, params.userId),
  sleepTimeAssessment: ({ params, query }) => api.assessment(deps, params.userId, query.days),
  summaryList: ({ params, query }) =>
    api.listSummaries(deps, params.userId, { includeDeleted: query.includeDeleted === 'true', limit: query.limit }),
  summaryRequest: ({ params, body, principal }) => api.requestSummary(deps, principal.subject, params.userId, body),
  summaryEdit: ({ params, body, principal }) =>
    api.editSummary(deps, principal.subject, params.userId, params.id, body),
  summaryDelete: ({ params, principal }) => api.deleteSummary(deps, principal.subject, params.userId, params.id),
  diaryList: ({ params, query }) => diary.listDiary(deps, params.userId, query),
  diaryWrite: ({ params, body, principal }) => diary.writeDiary(deps, principal.subject, params.userId, body),
  diaryOverride: ({ params, body, principal }) =>
    diary.overrideDiary(deps, principal.subject, params.userId, params.id, body),
  reviewList: ({ params, query }) =>
    api.listStagedForReview(deps, params.userId, {
      includeDecided: query.includeDecided === 'true',
      limit: query.limit,
      nextToken: query.nextToken,
    }),
  reviewPromote: ({ params, body, principal }) =>
    api.reviewPromote(deps, principal.subject, params.userId, body.path, body.reason),
  reviewDiscard: ({ params, body, principal }) =>
    api.reviewDiscard(deps, principal.subject, params.userId, body.path, body.reason),
  summaryQuality: ({ params }) => api.summaryQualityOf(deps, params.userId),
});

/** The the relation graph, Knowledge facts, capabilities, sources, settings, costs. */
const knowledgeOperations = (deps: api.MemoryApiDeps): GroupOperations<typeof knowledgeRoutes> => ({
  sourceReliability: ({ query }) => api.sourceReliability(deps, query.domains),
  capabilityConfidence: ({ params }) => api.capabilities(deps, params.userId),
  graphNeighbours: ({ params, query }) =>
    graph.graphNeighbours(deps, params.userId, params.entity, query.includePruned === 'true'),
  graphEdgeCreate: ({ params, body, principal }) => graph.createGraphEdge(deps, principal.subject, params.userId, body),
  graphEdgeRestore: ({ params, body, principal }) =>
    graph.restoreGraphEdge(deps, principal.subject, params.userId, body.id),
  knowledgeRestore: ({ params, body, principal }) =>
    facts.restorePrunedFact(deps, principal.subject, params.userId, body.path),
  knowledgeRevert: ({ params, body, principal }) =>
    corrections.revertKnowledgeChange(deps, principal.subject, params.userId, body.path, body.reason),
  userCosts: ({ params, query }) => costs.userCosts(deps, params.userId, query.days),
  settingsRead: ({ params }) => settings.readSettings(deps, params.userId),
  settingsChange: ({ params, body, principal }) =>
    settings.changeSettings(deps, principal.subject, params.userId, body),
  graphEntitySplit: ({ params, principal }) =>
    graph.splitGraphEntity(deps, principal.subject, params.userId, params.entity),
  graphLog: ({ params, query }) => graph.graphLog(deps, params.userId, query.limit),
});

/** The a user's memory as a whole, batches, the stage's admin routes. */
const userOperations = (deps: api.MemoryApiDeps): GroupOperations<typeof userRoutes> => ({
  batchList: ({ params, query }) => api.batches(deps, params.userId, query.limit),
  stageCosts: ({ query }) => costs.stageCosts(deps, query.days),
  reindex: ({ params }) => rebuilds.rebuildSearchIndex(deps, params.userId),
  userForget: ({ params, principal }) => forget.requestForget(deps, principal.subject, params.userId),
  userForgetReceipt: ({ params }) => forget.forgetReceipt(deps, params.userId),
  userExport: ({ params }) => archives.exportUser(deps, params.userId),
  userImport: ({ params, body }) => archives.importUser(deps, params.userId, body.archive),
  itemDelete: ({ params, query, principal }) =>
    api.deleteItem(deps, principal.subject, params.userId, params.id, query.reason),
  memoryForget: ({ params, body, principal }) => api.forgetByProvenance(deps, principal.subject, params.userId, body),
});

/** One implementation per route of the contract (the compiler checks none is missing). */
const operationsFor = (deps: api.MemoryApiDeps): Record<Exclude<OperationId, 'openapi' | 'console'>, Operation> => ({
  ...memoryOperations(deps),
  ...reflectionOperations(deps),
  ...knowledgeOperations(deps),
  ...userOperations(deps),
});

type Operations = ReturnType<typeof operationsFor>;
type FieldError = { path: string; message: string };

const json = (statusCode: number, body: unknown): APIGatewayProxyResultV2 => ({
  statusCode,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: JSON.stringify(body),
});
/** An error answer: `{"error": {"message", "fields"?}}` with its status. */
const problemOf = (status: number, message: string, fields?: FieldError[]): OperationAnswer => ({
  status,
  body: { error: { message, ...(fields ? { fields } : {}) } },
});
const problem = (statusCode: number, message: string, fields?: FieldError[]) => {
  const answer = problemOf(statusCode, message, fields);
  return json(answer.status, answer.body);
};

class BadRequest extends Error {
  constructor(readonly fields: FieldError[]) {
    super(`invalid request: ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}`);
  }
}

function parse(schema: z.ZodType | undefined, value: unknown, where: string): unknown {
  if (!schema) return undefined;
  const res = schema.safeParse(value);
  if (res.success) return res.data;
  throw new BadRequest(
    res.error.issues.map((i) => ({ path: [where, ...i.path.map(String)].join('.'), message: i.message })),
  );
}

/** The request's JSON body (base64-decoded when API Gateway encoded it); undefined when there is none. */
function bodyOf(event: APIGatewayProxyEventV2): unknown {
  if (event.body === undefined || event.body === '') return undefined;
  const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  try {
    return JSON.parse(text);
  } catch {
    throw new BadRequest([{ path: 'body', message: 'is not valid JSON' }]);
  }
}

/** Path parameters as API Gateway passes them (percent-encoded), decoded. */
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
  const page = consolePage();
  return {
    statusCode: 200,
    headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': page.contentSecurityPolicy },
    body: page.html,
  };
}

/** Authorise the principal for the route's user; an `admin` route (the stage's, or an operation on any user's) needs an administrator. */
function refusal(route: Route, principal: Principal, params: { userId: string }, log: Log): OperationAnswer | null {
  const decision =
    route.access === 'admin'
      ? authorizeStage(principal)
      : authorize(principal, params.userId, route.access === 'write' ? 'write' : 'read');
  if (decision.allowed) return null;
  log.warn('request refused', {
    operation: route.operationId,
    subject: principal.subject,
    userId: params.userId,
    reason: decision.reason,
  });
  return problemOf(403, decision.reason);
}

/** The HTTP status of each kind of request error a use case throws: statuses live here only. */
const STATUS_OF: Record<api.MemoryApiErrorKind, 400 | 403 | 404 | 409 | 413> = {
  invalid: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
};

/** An error out of parsing or the use case, as its answer: 400, the status of the use case's error kind, or 500 (logged). */
function errorAnswer(route: Route, error: unknown, log: Log): OperationAnswer {
  if (error instanceof BadRequest) return problemOf(400, error.message, error.fields);
  if (error instanceof api.MemoryApiError) return problemOf(STATUS_OF[error.kind], error.message, error.fields);
  log.error('request failed', { operation: route.operationId, error: error as Error });
  return problemOf(500, 'internal error');
}

/** Run one operation as the API runs it (see Invoke): what a /v1 route and an MCP tool both call. */
function invokerFor(operations: Operations, { log, redaction }: ApiRouteOptions): Invoke {
  return async (route, principal, input) => {
    try {
      const params = (parse(route.params, input.params ?? {}, 'params') ?? {}) as { userId: string };
      const refused = refusal(route, principal, params, log);
      if (refused) return refused;
      const query = parse(route.query, input.query ?? {}, 'query');
      // What a request would store (a saved memory, an edited summary, a prompt) is
      // redacted as a turn is; counts by kind, never the values.
      const redacted = redactFields(parse(route.body, input.body(), 'body'), redaction);
      if (Object.keys(redacted.counts).length > 0)
        log.info('request redacted', { operation: route.operationId, redacted: redacted.counts });
      const op = operations[route.operationId as keyof Operations];
      return { status: 200, body: await op({ params, query, body: redacted.value, principal }) };
    } catch (error) {
      return errorAnswer(route, error, log);
    }
  };
}

const principalOf = (event: APIGatewayProxyEventV2): Principal | null =>
  principalFromClaims(
    (event.requestContext as { authorizer?: { jwt?: { claims?: Record<string, unknown> } } }).authorizer?.jwt?.claims,
  );

const UNAUTHENTICATED = 'a valid bearer token is required';

/** A /v1 route: authenticate, then invoke its operation. */
async function serveOperation(
  route: Route,
  event: APIGatewayProxyEventV2,
  invoke: Invoke,
): Promise<APIGatewayProxyResultV2> {
  const principal = principalOf(event);
  if (!principal) return problem(401, UNAUTHENTICATED);
  let params: Record<string, string>;
  try {
    params = decoded(event.pathParameters);
  } catch (error) {
    // A path parameter that is no percent-encoding is a 400, as any other invalid input.
    if (error instanceof BadRequest) return problem(400, error.message, error.fields);
    throw error;
  }
  const answer = await invoke(route, principal, {
    params,
    query: event.queryStringParameters ?? {},
    body: () => bodyOf(event),
  });
  return json(answer.status, answer.body);
}

/** MCP: POST /v1/mcp, the same bearer token as every /v1 route. */
async function serveMcpRequest(event: APIGatewayProxyEventV2, invoke: Invoke): Promise<APIGatewayProxyResultV2> {
  const principal = principalOf(event);
  if (!principal) return problem(401, UNAUTHENTICATED);
  // Loaded on the first MCP request: the SDK (and the JSON Schema validator it brings) costs
  // every other request nothing at init.
  const { serveMcp } = await import('./mcp.js');
  return serveMcp(event, principal, invoke);
}

/** Every route of the contract, matched on method and path; an unknown one answers 404. */
function routerFor(invoke: Invoke): ApiDispatch {
  const router = httpRouterHandler({
    routes: (routes as readonly Route[]).map((route) => ({
      method: route.method,
      path: route.path,
      handler: (event: APIGatewayProxyEventV2) =>
        route.operationId === 'openapi' || route.operationId === 'console'
          ? Promise.resolve(publicPage(route, event))
          : serveOperation(route, event, invoke),
    })),
    // The router returns what this returns (its type says it must throw).
    notFoundResponse: (({ method, path }: { method: string; path: string }) =>
      problem(404, `no route ${method} ${path}`)) as unknown as (args: { method: string; path: string }) => never,
  });
  return (event, context) => router(event, context) as Promise<APIGatewayProxyResultV2>;
}

/** The api function's dispatcher over these use-case dependencies: an HTTP API event in, its answer out. */
export function apiRoutes(deps: api.MemoryApiDeps, options: ApiRouteOptions): ApiDispatch {
  const invoke = invokerFor(operationsFor(deps), options);
  const router = routerFor(invoke);
  return async (event, context) =>
    event.rawPath === MCP_PATH ? serveMcpRequest(event, invoke) : router(event, context);
}
