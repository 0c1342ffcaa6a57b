/** Fuzz targets of the memory API (api function): every route through its own dispatcher. */
import fc from 'fast-check';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { type Route, routes } from '../functions/api/contract.js';
import { type ApiDispatch, apiRoutes } from '../functions/api/routes.js';
import { lambdaContext } from '../infra/local/lambda-context.js';
import { httpApiEvent } from '../infra/local/lambda-events.js';
import { DEFAULT_SUMMARY_PROMPT, summaryPair } from '../lib/summaries/summary.js';
import { ingestTurns } from '../lib/turns/ingest-turns.js';
import * as api from '../lib/memory-api/memory-api.js';
import type { FieldError } from '../lib/kernel/parse-or-keep.js';
import { fixedClock, RecordingLog } from '../lib/kernel/runtime.fake.js';
import { MemoryErasureLog, RecordingItemEraser } from '../lib/forget/forget.fake.js';
import {
  ATTACKER,
  arbitraryBody,
  brief,
  edgeNumber,
  everyErrorNamesAField,
  hostileString,
  isPlainObject,
  type Mutated,
  mutate,
  namesField,
  pathLike,
  REQUEST_ROOTS,
  tryJson,
  VICTIM,
} from '../test/helpers/hostile-input.js';
import type { RecordingWorld } from '../test/helpers/recording-world.js';
import {
  count,
  type FuzzOptions,
  type FuzzTarget,
  ingestDepsOf,
  largestAttributes,
  NOW,
  records,
  SECRET,
  storageProblems,
  validTurn,
  world,
} from './fuzz-world.js';

/** A request of an API case: path parameters as API Gateway passes them, the query, the body as sent. */
export interface ApiRequest {
  pathParameters: Record<string, string>;
  query: Record<string, string>;
  body: string | undefined;
}

/** The claims the JWT authorizer passes on for the attacker's token (a credential for the attacker only). */
const ATTACKER_CLAIMS = { sub: ATTACKER, memory_users: ATTACKER };

/** A path segment for routing: percent-encoded (a lone surrogate, which cannot be, stands as `x`). */
const segment = (v: string) => {
  try {
    return encodeURIComponent(v);
  } catch {
    return 'x';
  }
};

/**
 * The HTTP API event API Gateway would hand the api function for this request: the route's
 * path with the case's parameters, its path parameters as the case passes them, the body as
 * sent or base64-encoded (as API Gateway sends a binary body), the attacker's claims when
 * the case carries the bearer token.
 */
export function apiEventOf(route: Route, c: ApiCase, req: ReturnType<typeof apiRequestOf>): APIGatewayProxyEventV2 {
  let path = route.path;
  for (const [k, v] of Object.entries(req.rawParams)) path = path.replace(`{${k}}`, segment(v));
  // Text that is not well-formed UTF-16 would not survive the round trip through bytes: it goes as text.
  const base64 = c.base64 && req.body !== undefined && Buffer.from(req.body, 'utf8').toString('utf8') === req.body;
  const body = req.body !== undefined && base64 ? Buffer.from(req.body, 'utf8').toString('base64') : req.body;
  return httpApiEvent({
    method: route.method,
    path,
    query: req.query,
    pathParameters: req.pathParameters,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    ...(body !== undefined ? { body, isBase64Encoded: base64 } : {}),
    ...(c.bearer ? { claims: ATTACKER_CLAIMS } : {}),
    requestId: 'fuzz',
  });
}

/** The api function's dispatcher (functions/api/routes.ts) over the recording fakes; its log holds what it logged (a 500's error). */
function apiDispatchOf(w: RecordingWorld): { dispatch: ApiDispatch; log: RecordingLog } {
  const log = new RecordingLog();
  return { dispatch: apiRoutes(apiDeps(w), { log, redaction: { personalData: false } }), log };
}

/** The answer of the api function to this event: its status and JSON body (the body as text when it is not JSON). */
async function callApi(
  dispatch: ApiDispatch,
  event: APIGatewayProxyEventV2,
): Promise<{ status: number; body: unknown }> {
  const result = await dispatch(event, lambdaContext('fuzz-api', 29));
  if (typeof result === 'string') return { status: 200, body: tryJson(result) ?? result };
  const text = result.body ?? '';
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: checked as text
  }
  return { status: result.statusCode ?? 200, body };
}

/** Stands for the id of an item the caller owns (filled in once it exists). */
export const OWN_MEM = '$own-mem';
const apiDeps = (w: RecordingWorld): api.MemoryApiDeps => ({
  sources: w.sources,
  graph: w.graph,
  catalog: w.catalog,
  search: w.search,
  items: w.items,
  trust: w.trust,
  audit: w.audit,
  turns: w.turns,
  knowledge: w.knowledge,
  summaries: w.summaries,
  runs: w.runs,
  batchLogs: w.batchLogs,
  jobs: w.jobs,
  signalState: w.signalState,
  costs: w.costs,
  settings: w.settings,
  events: w.events,
  diary: w.diary,
  forgets: w.forgets,
  archives: w.archives,
  erasures: new MemoryErasureLog(),
  eraser: new RecordingItemEraser(),
  clock: fixedClock(NOW),
});

/** The attacker's own memory for API cases: turns, a staged item, a summary, API items. Returns the id of a long-term item. */
async function seedAttackerForApi(w: RecordingWorld): Promise<string> {
  // Turns with the largest attributes the contract allows: items derived from them carry them.
  await ingestTurns(
    records(
      [1, 2, 3].map((i) =>
        JSON.stringify(
          validTurn(ATTACKER, i, `I keep a reef tank with clownfish, note ${i}.`, { attributes: largestAttributes(i) }),
        ),
      ),
    ),
    ingestDepsOf(w),
  );
  await w.knowledge.putStaged(
    ATTACKER,
    [
      {
        path: 'Facts/reef--batch-1-3.md',
        kind: 'fact',
        title: 'reef',
        category: 'Facts',
        confidence: 0.6,
        sourceTurns: [1],
        text: 'reef tank',
        meta: { staged_at: NOW },
        body: 'reef tank',
        markdown: 'reef tank',
      },
    ],
    'batch-1-3',
  );
  await w.summaries.write(
    summaryPair({
      userId: ATTACKER,
      id: 'summary-1-3',
      kind: 'idle-summary',
      trigger: 'idle',
      createdAt: NOW,
      sourceTurns: [1, 2, 3],
      prompt: DEFAULT_SUMMARY_PROMPT,
      text: 'Reef tank talk.',
      modelId: 'm',
      inputTokens: 1,
      outputTokens: 1,
      deleted: false,
    }),
  );
  const deps = apiDeps(w);
  const principal = { subject: ATTACKER, users: [ATTACKER], admin: false };
  await api.createTierEntry(deps, principal.subject, ATTACKER, 'short_term', {
    text: 'feeds fish at 8',
    type: 'preference',
    clientId: 'c-short',
  });
  const long = await api.createTierEntry(deps, principal.subject, ATTACKER, 'long_term', {
    text: 'the tank holds 40 gallons',
    clientId: 'c-long',
  });
  return long.item.id;
}

/** A valid sample of each route's body and query, for the attacker's own memory. */
const SAMPLES: Record<
  string,
  { body?: Record<string, unknown>; query?: Record<string, string>; params?: Record<string, string> }
> = {
  memorySearch: {
    body: {
      query: 'reef tank',
      limit: 5,
      filters: { includeGlobal: true, kind: ['turn', 'memory'], minQuality: 0 },
      minSimilarity: 0,
    },
  },
  memorySave: {
    body: {
      turnId: 1,
      sessionId: 's-1',
      validation: 'APPROVE',
      candidates: [
        {
          text: 'likes clownfish',
          title: 'clownfish',
          type: 'preference',
          keywords: ['fish'],
          contentTypes: ['preference'],
          confidence: 0.8,
        },
      ],
    },
  },
  memoryRetrieve: { body: { id: 'turn:1' } },
  tierCreate: {
    params: { tier: 'short_term' },
    body: {
      text: 'water change on Sunday',
      type: 'task',
      sessionId: 's-1',
      sourceTurns: [1, 2, 3],
      ttlSeconds: 3600,
      clientId: 'c-1',
      confidence: 0.7,
    },
  },
  tierQuery: {
    params: { tier: 'long_term' },
    query: {
      type: 'note',
      kind: 'memory',
      sessionId: 's-1',
      since: '2026-01-01T00:00:00Z',
      until: '2026-12-31T00:00:00Z',
      minConfidence: '0.1',
      limit: '10',
    },
  },
  tierDelete: { params: { tier: 'long_term', id: OWN_MEM } },
  itemPromote: { params: { id: OWN_MEM }, body: { reason: 'useful' } },
  itemDemote: { params: { id: OWN_MEM }, body: { reason: 'superseded', note: 'a newer one' } },
  itemContradict: { params: { id: OWN_MEM }, body: { evidence: 'turn:9', note: 'the user said otherwise' } },
  itemContradictUndo: { params: { id: OWN_MEM } },
  itemEdit: { params: { id: 'summary:summary-1-3' }, body: { text: 'The user keeps a reef tank.', reason: 'shorter' } },
  itemRestore: {
    params: { id: 'knowledge:Facts/reef_tank.md' },
    body: { at: '2026-01-01T00:00:00.000Z', reason: 'the edit was wrong' },
  },
  memoryOutcomes: { body: { ids: [OWN_MEM, 'turn:1'], validation: 'APPROVE', turnId: 2 } },
  auditList: { query: { itemId: OWN_MEM, limit: '20' } },
  sleepTimeRuns: { query: { limit: '5' } },
  sleepTimeLatest: {},
  sleepTimeAssessment: { query: { days: '30' } },
  summaryList: { query: { includeDeleted: 'true' } },
  summaryRequest: { body: { prompt: 'Summarise the reef tank talk.', reflect: true } },
  summaryEdit: { params: { id: 'summary-1-3' }, body: { text: 'The user keeps a reef tank.', reason: 'shorter' } },
  summaryDelete: { params: { id: 'summary-1-3' } },
  diaryList: { query: { limit: '10', type: 'reflection', include: 'all' } },
  diaryOverride: { params: { id: 'batch-1-3' }, body: { decision: 'drop', reason: 'not about me' } },
  itemDelete: { params: { id: 'turn:2' }, query: { reason: 'not about me' } },
  // A turn nobody has: the real path, without erasing the replay that prompt-injection.ts fuzzes beside.
  memoryForget: { body: { turns: [9_999], dryRun: false, reason: 'not about me' } },
  reviewList: { query: { includeDecided: 'true' } },
  reviewPromote: { body: { path: 'Knowledge_staging/Facts/reef--batch-1-3.md', reason: 'looks right' } },
  reviewDiscard: { body: { path: 'Facts/reef--batch-1-3.md', reason: 'wrong' } },
  batchList: { query: { limit: '10' } },
  sourceReliability: { query: { domains: 'docs.example.com,WWW.Example.org' } },
  capabilityConfidence: {},
  graphNeighbours: { params: { entity: 'Reef Tank' }, query: { includePruned: 'true' } },
  graphEdgeCreate: { body: { from: 'reef tank', relation: 'contains', to: 'clownfish', note: 'said so' } },
  graphEdgeRestore: { body: { id: 'reef_tank|contain|clownfish' } },
  knowledgeRestore: { body: { path: 'Knowledge/Facts/reef_tank.md' } },
  knowledgeRevert: { body: { path: 'Knowledge/Facts/reef_tank.md', reason: 'the correction was wrong' } },
  summaryQuality: {},
  userCosts: { query: { days: '7' } },
  settingsRead: {},
  settingsChange: { body: { idleMinutes: 20, prompt: 'List the open questions.', maxTokens: null } },
  stageCosts: { query: { days: '7' } },
  reindex: {},
  graphEntitySplit: { params: { entity: 'clownfish' } },
  graphLog: { query: { limit: '20' } },
};

export interface ApiCase {
  userId: string;
  params: Mutated;
  query: Mutated;
  body: { text: string | undefined; mutation: Mutated | null };
  encode: boolean;
  /** The body goes base64-encoded (API Gateway's `isBase64Encoded`). */
  base64: boolean;
  /** The request carries the attacker's bearer token (else no claims reach the function: 401). */
  bearer: boolean;
}

/** Query strings are strings: replace, remove or add one parameter with a hostile string. */
const mutateQuery = (valid: Record<string, string>, o: FuzzOptions): fc.Arbitrary<Mutated> => {
  const small = { ...o, maxBytes: Math.min(o.maxBytes ?? 3 << 20, 16 * 1024) };
  const keys = Object.keys(valid);
  return fc.oneof(
    fc.constant({ value: { ...valid }, kind: 'valid' as const, field: '' }),
    ...(keys.length > 0
      ? [
          fc
            .record({ field: fc.constantFrom(...keys), v: fc.oneof(hostileString(small), edgeNumber.map(String)) })
            .map(({ field, v }) => ({ value: { ...valid, [field]: v }, kind: 'replace' as const, field })),
          fc.constantFrom(...keys).map((field) => {
            const copy: Record<string, string> = { ...valid };
            delete copy[field];
            return { value: copy, kind: 'remove' as const, field };
          }),
        ]
      : []),
    fc
      .record({
        field: fc.constantFrom('userId', 'admin', '__proto__', 'x'),
        v: hostileString({ ...small, maxBytes: 0 }),
      })
      .map(({ field, v }) => ({ value: { ...valid, [field]: v }, kind: 'add' as const, field })),
  );
};

function apiCase(route: Route, o: FuzzOptions): fc.Arbitrary<ApiCase> {
  const sample = SAMPLES[route.operationId] ?? {};
  const paramFields = Object.keys(sample.params ?? {});
  const paramsArb: fc.Arbitrary<Mutated> =
    paramFields.length === 0
      ? fc.constant({ value: {}, kind: 'valid' as const, field: '' })
      : fc.oneof(
          { weight: 3, arbitrary: fc.constant({ value: { ...sample.params }, kind: 'valid' as const, field: '' }) },
          {
            weight: 2,
            arbitrary: fc
              .record({
                field: fc.constantFrom(...paramFields),
                v: fc.oneof(
                  pathLike(VICTIM),
                  hostileString({ ...o, maxBytes: 0 }),
                  fc.constantFrom(
                    'mem:0000',
                    'staged:Facts/reef--batch-1-3.md',
                    'summary:summary-1-3',
                    'knowledge:Facts/secret.md',
                  ),
                ),
              })
              .map(({ field, v }) => ({
                value: { ...sample.params, [field]: v },
                kind: 'replace' as const,
                field,
              })),
          },
        );
  const bodyArb: fc.Arbitrary<{ text: string | undefined; mutation: Mutated | null }> = sample.body
    ? fc.oneof(
        {
          weight: 8,
          arbitrary: mutate(sample.body, o).map((m) => ({ text: JSON.stringify(m.value) ?? 'null', mutation: m })),
        },
        { weight: 1, arbitrary: arbitraryBody({ ...o, maxBytes: 0 }).map((text) => ({ text, mutation: null })) },
        { weight: 1, arbitrary: fc.constant({ text: undefined, mutation: null }) },
      )
    : fc.oneof(
        { weight: 4, arbitrary: fc.constant({ text: undefined, mutation: null }) },
        { weight: 1, arbitrary: arbitraryBody({ ...o, maxBytes: 0 }).map((text) => ({ text, mutation: null })) },
      );
  return fc.record({
    userId: fc.oneof(
      { weight: 8, arbitrary: fc.constant(ATTACKER) },
      { weight: 1, arbitrary: fc.constantFrom(VICTIM, 'GLOBAL', `${ATTACKER}/../${VICTIM}`) },
      { weight: 1, arbitrary: fc.oneof(pathLike(VICTIM), hostileString({ ...o, maxBytes: 0 })) },
    ),
    params: paramsArb,
    query: sample.query ? mutateQuery(sample.query, o) : fc.constant({ value: {}, kind: 'valid' as const, field: '' }),
    body: bodyArb,
    encode: fc.boolean(),
    base64: fc.boolean(),
    bearer: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  });
}

/** The request of an API case: path parameters as API Gateway passes them (percent-encoded unless `encode` is off), query, body. */
export function apiRequestOf(
  c: ApiCase,
  ownMem: string,
): ApiRequest & { rawParams: Record<string, string>; encodable: boolean } {
  const fill = (v: string) => v.replaceAll(OWN_MEM, ownMem);
  const rawParams: Record<string, string> = {
    userId: c.userId,
    ...Object.fromEntries(
      Object.entries(c.params.value as Record<string, unknown>).map(([k, v]) => [k, fill(String(v))]),
    ),
  };
  let encodable = true;
  // A lone surrogate cannot be percent-encoded: such a value travels as it is.
  const encode = (v: string) => {
    try {
      return encodeURIComponent(v);
    } catch {
      encodable = false;
      return v;
    }
  };
  const pathParameters = Object.fromEntries(Object.entries(rawParams).map(([k, v]) => [k, c.encode ? encode(v) : v]));
  const query = Object.fromEntries(
    Object.entries(c.query.value as Record<string, string>).map(([k, v]) => [k, fill(v)]),
  );
  const body = c.body.text === undefined ? undefined : fill(c.body.text);
  return { pathParameters, query, body, rawParams, encodable };
}

/**
 * The properties of one API answer: never a 500; a 400 names the field (the one the case
 * changed, when it changed one); a 2xx only for the caller's own user (or GLOBAL, read);
 * an answer that matches the contract and never holds the victim's secret.
 */
export function apiAnswerProblems(
  route: Route,
  c: ApiCase,
  req: ReturnType<typeof apiRequestOf>,
  status: number,
  body: unknown,
  caller = ATTACKER,
): string[] {
  const failures: string[] = [];
  let decodedUser: string | undefined;
  try {
    decodedUser = decodeURIComponent(req.pathParameters.userId ?? '');
  } catch {
    decodedUser = undefined;
  }
  const fields = (body as { error?: { fields?: FieldError[] } } | null)?.error?.fields;
  if (status >= 500) failures.push(`${status}: ${brief(body, 300)}`);
  if (status === 400 && fields) {
    const where = fields[0]?.path.split('.')[0] ?? '';
    const input = where === 'body' ? tryJson(req.body ?? '') : where === 'query' ? req.query : req.rawParams;
    failures.push(...everyErrorNamesAField(fields, isPlainObject(input), REQUEST_ROOTS).map((p) => `400 ${p}`));
    const mutation =
      where === 'body'
        ? c.body.mutation
        : where === 'query'
          ? c.query
          : where === 'params' && c.params.kind !== 'valid'
            ? c.params
            : null;
    const userChanged = where === 'params' && c.userId !== caller;
    if (
      mutation &&
      mutation.kind !== 'valid' &&
      mutation.kind !== 'add' &&
      !namesField(fields, mutation.field) &&
      !(userChanged && namesField(fields, 'userId'))
    ) {
      failures.push(`400 for a ${mutation.kind} of ${where}.${mutation.field} does not name it: ${brief(fields, 300)}`);
    }
    // A valid sample must pass where it is: a refusal of it is a contract bug.
    if (mutation && mutation.kind === 'valid' && where !== 'params')
      failures.push(`a valid ${where} was refused: ${brief(fields, 300)}`);
  }
  if (status >= 200 && status < 300) {
    if (decodedUser !== caller && !(decodedUser === 'GLOBAL' && route.access === 'read'))
      failures.push(`${status} for user ${JSON.stringify(decodedUser)} (the caller may act on ${caller} only)`);
    const shape = route.response.safeParse(body);
    if (!shape.success) failures.push(`the answer does not match the contract: ${brief(shape.error.issues, 300)}`);
  }
  let answer = '';
  try {
    answer = JSON.stringify(body) ?? '';
  } catch (error) {
    failures.push(`the answer cannot be serialised: ${(error as Error).message}`);
  }
  if (answer.includes(SECRET)) failures.push('the answer holds the victim’s secret');
  return failures;
}

/** Any route of the API with one of its cases. */
export const anyApiCase = (o: FuzzOptions = {}): fc.Arbitrary<{ route: Route; c: ApiCase }> =>
  fc
    .constantFrom(...(routes as readonly Route[]).filter((r) => r.access !== 'public'))
    .chain((route) => apiCase(route, o).map((c) => ({ route, c })));

export function apiTarget(route: Route, o: FuzzOptions): FuzzTarget<ApiCase> {
  return {
    name: `api ${route.method} ${route.path.replace('/v1/users/{userId}', '')}`,
    weight: 0.5,
    arbitrary: apiCase(route, o),
    run: async (c) => {
      const failures: string[] = [];
      const outcomes: Record<string, number> = {};
      const { world: w, victimBefore } = await world();
      const ownMem = await seedAttackerForApi(w);
      w.writes.writes.length = 0;
      const req = apiRequestOf(c, ownMem);
      const { dispatch, log } = apiDispatchOf(w);
      const event = apiEventOf(route, c, req);
      const res = await callApi(dispatch, event);
      count(outcomes, String(res.status));
      if (event.isBase64Encoded) count(outcomes, `base64 ${res.status}`);
      if (!c.bearer) {
        // No token reached the function (the authorizer would have refused it first): 401, and nothing written.
        if (res.status !== 401) failures.push(`${res.status} without a bearer token: ${brief(res.body, 300)}`);
        failures.push(...storageProblems(w, new Set(), victimBefore));
        return { failures, outcomes };
      }
      if (res.status === 500)
        failures.push(
          `500: ${brief((log.entries.find((e) => e.level === 'error')?.extra?.error as Error)?.stack ?? res.body, 400)}`,
        );
      else failures.push(...apiAnswerProblems(route, c, req, res.status, res.body));
      failures.push(...storageProblems(w, new Set([ATTACKER]), victimBefore));
      return { failures, outcomes };
    },
  };
}
