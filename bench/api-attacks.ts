/**
 * An attack suite against the memory API: a user-scoped caller tries to read or
 * write another user's memory, the GLOBAL scope, or anything at all without valid
 * credentials — every route of the contract, path tricks on the user id, body tricks, and
 * forged, expired or malformed tokens. An attack succeeds when the API answers 2xx for a
 * user other than the caller's own, or when any answer contains the victim's secret.
 *
 * Locally the bearer token is checked by the stand-in for API Gateway's JWT authorizer
 * (infra/local/http-api.ts); in the cloud the authorizer does it. The handler checks the
 * user and scope itself in both (lib/memory-api/access.ts). Used by a test and by the bench.
 */
import { SignJWT } from 'jose';
import { type Route, routes } from '../functions/api/contract.js';
import type { LocalHarness } from '../infra/local/harness.js';
import { LOCAL_AUDIENCE, LOCAL_ISSUER } from '../infra/local/tokens.js';
import { keys } from '../lib/kernel/memory-paths.js';
import { turnLine } from './turn-line.js';

export const ATTACKER = 'attacker-user';
export const VICTIM = 'victim-user';
/** A word only the victim's memory holds. */
export const SECRET = 'quokkazebra';
/** The victim's session (its turns'), where the victim's ephemeral entry holding the secret is written. */
export const VICTIM_SESSION = 's1';

export interface AttackReport {
  tried: number;
  byKind: Record<string, number>;
  /** Descriptions of the attacks that succeeded (empty when the API held). */
  succeeded: string[];
}

const turn = (userId: string, turnId: number, text: string) =>
  turnLine(userId, turnId, {
    at: new Date(Date.UTC(2026, 2, 1, 10, turnId)),
    query: text,
    response: `Noted: ${text}`,
    validation: { outcome: 'APPROVE', quality: 0.9 },
  });

/** Victim and attacker each get a few turns; the victim's mention the secret. */
export async function seedAttackData(stack: LocalHarness): Promise<void> {
  const lines = [
    ...[1, 2, 3].map((i) =>
      turn(VICTIM, i, `My private password hint is ${SECRET} number ${i}, please remember ${SECRET}.`),
    ),
    ...[1, 2, 3].map((i) => turn(ATTACKER, i, `I like hiking trails number ${i}.`)),
  ];
  await stack.replayLines(lines);
  await stack.waitUntilDrained();
  const res = await fetch(`${stack.info.apiUrl}/v1/users/${VICTIM}/memory/tiers/ephemeral`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.info.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text: `Right now the victim is typing ${SECRET} into a form`, sessionId: VICTIM_SESSION }),
  });
  if (!res.ok) throw new Error(`the victim's ephemeral entry was not written: ${res.status}`);
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/**
 * A valid body per operation: the handler refuses before it reads the body, but an attack
 * that a body error could mask would prove nothing, so each carries one that would pass.
 */
const SAMPLE_BODIES: Record<string, unknown> = {
  memorySearch: { query: SECRET, limit: 10, sessionId: VICTIM_SESSION },
  memorySave: { turnId: 1, validation: 'APPROVE', candidates: [{ text: 'planted by the attacker' }] },
  memoryRetrieve: { id: 'turn:1' },
  tierCreate: { text: 'planted by the attacker' },
  itemPromote: { reason: 'attack' },
  itemDemote: { reason: 'other' },
  itemContradict: { evidence: 'attack' },
  memoryOutcomes: { ids: ['turn:1'], validation: 'APPROVE' },
  reviewPromote: { path: 'Facts/x.md' },
  summaryRequest: { prompt: 'planted by the attacker' },
  reviewDiscard: { path: 'Facts/x.md' },
  graphEdgeCreate: { from: 'attacker', relation: 'owns', to: 'victim' },
  graphEdgeRestore: { id: 'a|related_to|b' },
  knowledgeRestore: { path: 'Knowledge/Facts/x.md' },
  knowledgeRevert: { path: 'Knowledge/Facts/x.md' },
  settingsChange: { enabled: false },
  summaryEdit: { text: 'planted by the attacker' },
  itemEdit: { text: 'planted by the attacker', reason: 'attack' },
  itemRestore: { at: '2026-01-01T00:00:00.000Z', reason: 'attack' },
  diaryWrite: { text: 'planted by the attacker' },
  diaryOverride: { decision: 'keep', reason: 'planted by the attacker' },
  // A turn nobody has: a real run, which must not erase the attacker's own replay (prompt-injection.ts fuzzes its own user too).
  memoryForget: { turns: [9_999], dryRun: false, reason: 'attack' },
  userImport: { archive: plantedArchive(VICTIM, keys.userPk(VICTIM), 'Knowledge/Facts/planted.md') },
};

/** An archive (lib/archive/user-archive.ts) that plants a record in `pk` and a document at `path`, as `userId`'s. */
function plantedArchive(userId: string, pk: string, path: string) {
  return {
    format: 'reflective-memory/user-archive',
    version: 1,
    userId,
    exportedAt: '2026-01-01T00:00:00.000Z',
    records: [{ pk, sk: keys.memorySk('mem:planted'), text: 'planted by the attacker' }],
    documents: [{ path, text: 'planted by the attacker' }],
  };
}

/** A valid query string for the routes that need one (so a validation error cannot mask an attack). */
const SAMPLE_QUERIES: Record<string, string> = {
  sourceReliability: '?domains=docs.example.com',
  graphLog: '?limit=5',
};

/** Every route that is not public, with a valid sample body for those that take one. */
const apiRoutes = () =>
  (routes as readonly Route[])
    .filter((r) => r.access !== 'public')
    .map((r) => {
      if (r.body && !(r.operationId in SAMPLE_BODIES))
        throw new Error(`no sample body for ${r.operationId}: add one to SAMPLE_BODIES`);
      return { ...r, sampleBody: r.body ? SAMPLE_BODIES[r.operationId] : undefined };
    });

/** The attacker's session: the stack, its credential and the report every attempt adds to. */
interface Attack {
  stack: LocalHarness;
  attacker: string;
  report: AttackReport;
}

interface SendOptions {
  /** The bearer token; null sends no Authorization header. @default the attacker's */
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One attempt on the REST API: it succeeds on a 2xx when it `targetsOther`, or when the answer holds the secret. */
async function send(
  a: Attack,
  kind: string,
  description: string,
  method: string,
  path: string,
  options: SendOptions,
  targetsOther: boolean,
): Promise<void> {
  a.report.tried += 1;
  a.report.byKind[kind] = (a.report.byKind[kind] ?? 0) + 1;
  const token = options.token === undefined ? a.attacker : options.token;
  const res = await fetch(`${a.stack.info.apiUrl}${path}`, {
    method,
    headers: {
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined
      ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) }
      : {}),
  });
  const text = await res.text();
  const ok = res.status >= 200 && res.status < 300;
  if ((ok && targetsOther) || text.includes(SECRET)) a.report.succeeded.push(`${kind}: ${description} → ${res.status}`);
}

/**
 * Runs every attack as the attacker. `as` replaces the attacker's credential (a test passes
 * an administrator's to prove the suite notices a success).
 */
export async function runApiAttacks(stack: LocalHarness, options: { as?: string } = {}): Promise<AttackReport> {
  const a: Attack = {
    stack,
    attacker: options.as ?? (await stack.mintUserToken([ATTACKER])),
    report: { tried: 0, byKind: {}, succeeded: [] },
  };
  await attackEveryRoute(a);
  await attackPathTricks(a);
  await attackBodyTricks(a);
  await attackMcpTools(a);
  await attackCredentials(a);
  return a.report;
}

/** 1. Every route of the contract on the victim's id, and writes on GLOBAL. */
async function attackEveryRoute(a: Attack): Promise<void> {
  for (const route of apiRoutes()) {
    const fill = (userId: string) =>
      route.path
        .replace('{userId}', encodeURIComponent(userId))
        .replace('{tier}', 'long_term')
        .replace('{id}', 'mem:0000')
        .replace('{entity}', 'reef') + (SAMPLE_QUERIES[route.operationId] ?? '');
    await send(
      a,
      'other user',
      `${route.method} ${route.path} as ${VICTIM}`,
      route.method,
      fill(VICTIM),
      { body: route.sampleBody },
      true,
    );
    if (route.access === 'write')
      await send(
        a,
        'GLOBAL write',
        `${route.method} ${route.path} on GLOBAL`,
        route.method,
        fill('GLOBAL'),
        { body: route.sampleBody },
        true,
      );
  }
}

/** User ids that try to name the victim through encoding, case, look-alikes or wildcards. */
const PATH_TRICKS = [
  `${VICTIM}`,
  `${ATTACKER}/../${VICTIM}`,
  `..%2F${VICTIM}`,
  `${ATTACKER}%2F..%2F${VICTIM}`,
  `%2e%2e%2f${VICTIM}`,
  `${VICTIM}%00`,
  `${VICTIM}%20`,
  `${VICTIM.toUpperCase()}`,
  `${ATTACKER}%2C${VICTIM}`,
  `${ATTACKER}%20${VICTIM}`,
  `%25${VICTIM}`,
  `${VICTIM.replace('v', '\u0432')}`, // Cyrillic в
  `*`,
  `%2A`,
  `users%2F${VICTIM}`,
];

/** 2. Path tricks on the user id: each either names another user or must not reach the victim. */
async function attackPathTricks(a: Attack): Promise<void> {
  for (const trick of PATH_TRICKS) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(trick);
    } catch {
      decoded = trick;
    }
    const other = decoded !== ATTACKER;
    for (const [method, suffix, body] of [
      ['POST', '/memory/search', { query: SECRET, limit: 10 }],
      ['GET', '/summaries', undefined],
      ['GET', '/review/staged', undefined],
      ['POST', '/memory/tiers/long_term', { text: 'planted' }],
    ] as const) {
      await send(
        a,
        'path trick',
        `${method} /v1/users/${trick}${suffix}`,
        method,
        `/v1/users/${trick.includes('%') ? trick : encodeURIComponent(trick)}${suffix}`,
        { body },
        other,
      );
    }
  }
}

const OWN = `/v1/users/${ATTACKER}`;

/** Bodies on the caller's own routes that name the victim, GLOBAL or a path outside the caller's prefix. */
const BODY_TRICKS: Array<[string, string, unknown]> = [
  ['search naming the victim in the body', '/memory/search', { query: SECRET, limit: 10, userId: VICTIM }],
  [
    'search with a filter naming the victim',
    '/memory/search',
    { query: SECRET, limit: 10, filters: { userId: VICTIM } },
  ],
  ['search for the secret (own memory)', '/memory/search', { query: SECRET, limit: 50 }],
  [
    'search naming the victim’s session (its ephemeral entry)',
    '/memory/search',
    { query: SECRET, limit: 50, sessionId: VICTIM_SESSION },
  ],
  ['retrieve a path climbing out of the prefix', '/memory/retrieve', { path: `../${VICTIM}/Knowledge/Facts/x.md` }],
  ['retrieve an absolute path', '/memory/retrieve', { path: `/users/${VICTIM}/turns/00000001/turn.md` }],
  ['retrieve the victim’s turn id', '/memory/retrieve', { id: 'turn:1' }],
  [
    'review promote of the victim’s staged path',
    '/review/promote',
    { path: `../../${VICTIM}/Knowledge_staging/Facts/x.md` },
  ],
  ['save into GLOBAL through the body', '/memory/save', { text: 'planted', scope: 'global', turnId: 1 }],
];

/** Imports into one's own user whose archive reaches elsewhere: any 2xx is a success. */
const IMPORT_TRICKS: Array<[string, unknown]> = [
  [
    'import records into the victim’s partition',
    plantedArchive(ATTACKER, keys.userPk(VICTIM), 'Knowledge/Facts/planted.md'),
  ],
  ['import records into GLOBAL', plantedArchive(ATTACKER, 'GLOBAL', 'Knowledge/Facts/planted.md')],
  [
    'import a document climbing out of the prefix',
    plantedArchive(ATTACKER, keys.userPk(ATTACKER), `../${VICTIM}/Knowledge/Facts/planted.md`),
  ],
  [
    'import the victim’s archive as one’s own',
    plantedArchive(VICTIM, keys.userPk(VICTIM), 'Knowledge/Facts/planted.md'),
  ],
];

/** 3. Body tricks on the caller's own routes: nothing may reach the victim's memory or GLOBAL. */
async function attackBodyTricks(a: Attack): Promise<void> {
  for (const [description, suffix, body] of BODY_TRICKS)
    await send(a, 'body trick', description, 'POST', `${OWN}${suffix}`, { body }, false);
  for (const [description, archive] of IMPORT_TRICKS)
    await send(a, 'body trick', description, 'POST', `${OWN}/import`, { body: { archive } }, true);
  // Promote one's own entry to GLOBAL (administrators only).
  const created = await fetch(`${a.stack.info.apiUrl}${OWN}/memory/tiers/long_term`, {
    method: 'POST',
    headers: { authorization: `Bearer ${a.attacker}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'an entry the attacker owns' }),
  });
  const ownId = ((await created.json()) as { item?: { id?: string } }).item?.id ?? 'mem:missing';
  await send(
    a,
    'GLOBAL write',
    'promote an own entry to GLOBAL',
    'POST',
    `${OWN}/memory/items/${encodeURIComponent(ownId)}/promote`,
    { body: { to: 'global', reason: 'share' } },
    true,
  );
}

/**
 * One MCP tool call. A refused tool call is an HTTP 200 whose JSON-RPC result says `isError`;
 * anything else reached the target.
 */
async function mcpCall(
  a: Attack,
  description: string,
  name: string,
  args: Record<string, unknown>,
  token: string | null = a.attacker,
): Promise<void> {
  a.report.tried += 1;
  a.report.byKind.mcp = (a.report.byKind.mcp ?? 0) + 1;
  const res = await fetch(`${a.stack.info.apiUrl}/v1/mcp`, {
    method: 'POST',
    headers: {
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  const answer = res.ok ? (JSON.parse(text) as { result?: { isError?: boolean } }) : null;
  if ((answer?.result && answer.result.isError !== true) || text.includes(SECRET))
    a.report.succeeded.push(`mcp: ${description} → ${res.status}`);
}

/** The MCP tools, their arguments, and whether they write (then GLOBAL is tried too). */
const MCP_TOOLS: Array<[string, Record<string, unknown>, boolean]> = [
  ['memory_search', { query: SECRET, limit: 10 }, false],
  ['memory_retrieve', { id: 'mem:0000' }, false],
  ['memory_save', { candidates: [{ text: 'planted' }] }, true],
  ['memory_forget_item', { id: 'mem:0000' }, true],
  ['memory_forget_item', { id: 'turn:1' }, true],
  ['memory_forget', { turns: [1, 2, 3], dryRun: false }, true],
  ['memory_forget', { sessionId: 'locomo/conv-26-session-1', dryRun: true }, false],
];

/** MCP: every tool on the victim's id, on GLOBAL, and without a token. */
async function attackMcpTools(a: Attack): Promise<void> {
  for (const [name, args, writes] of MCP_TOOLS) {
    await mcpCall(a, `${name} as ${VICTIM}`, name, { userId: VICTIM, ...args });
    if (writes) await mcpCall(a, `${name} on GLOBAL`, name, { userId: 'GLOBAL', ...args });
    await mcpCall(a, `${name} without a token`, name, { userId: ATTACKER, ...args }, null);
  }
}

/** 4. Credentials: none, malformed, forged, wrong algorithm, expired, wrong issuer or audience. */
async function attackCredentials(a: Attack): Promise<void> {
  for (const [description, token, headers] of await badCredentials(a)) {
    await send(
      a,
      'credentials',
      description,
      'POST',
      `/v1/users/${VICTIM}/memory/search`,
      { token, body: { query: SECRET, limit: 10 }, ...(headers ? { headers } : {}) },
      true,
    );
  }
}

/** Each bad credential: its description, the bearer token (null: none) and any other headers. */
async function badCredentials(a: Attack): Promise<Array<[string, string | null, Record<string, string>?]>> {
  const secret = new TextEncoder().encode(a.stack.info.tokenSecret);
  const wrong = new TextEncoder().encode('not-the-stack-secret-0123456789abcdef');
  const sign = (
    claims: Record<string, unknown>,
    key: Uint8Array,
    opts: { exp?: number; iss?: string; aud?: string } = {},
  ) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject('forger')
      .setIssuer(opts.iss ?? LOCAL_ISSUER)
      .setAudience(opts.aud ?? LOCAL_AUDIENCE)
      .setIssuedAt(opts.exp !== undefined ? opts.exp - 60 : undefined)
      .setExpirationTime(opts.exp ?? '1h')
      .sign(key);
  const adminClaims = { 'cognito:groups': ['memory-admin'], memory_users: VICTIM };
  return [
    ['no Authorization header', null],
    ['empty bearer', ''],
    ['garbage bearer', 'not.a.jwt'],
    ['admin claims signed with another key', await sign(adminClaims, wrong)],
    [
      'alg none with admin claims',
      `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...adminClaims, sub: 'x', iss: LOCAL_ISSUER, aud: LOCAL_AUDIENCE, exp: Math.floor(Date.now() / 1000) + 3600 })}.`,
    ],
    ['expired admin token', await sign(adminClaims, secret, { exp: Math.floor(Date.now() / 1000) - 3600 })],
    ['wrong issuer', await sign(adminClaims, secret, { iss: 'https://evil.example' })],
    ['wrong audience', await sign(adminClaims, secret, { aud: 'another-api' })],
    [
      'attacker token with a tampered payload',
      (() => {
        const [h, , s] = a.attacker.split('.');
        return `${h}.${b64({ sub: 'x', memory_users: VICTIM, iss: LOCAL_ISSUER, aud: LOCAL_AUDIENCE, exp: Math.floor(Date.now() / 1000) + 3600 })}.${s}`;
      })(),
    ],
    ['basic auth instead of bearer', null, { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` }],
  ];
}

/** Run alone (bench/run.ts does, one local harness per process): prints the report as JSON on its last line. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const { startHarness } = await import('../infra/local/harness.js');
  const stack = await startHarness({ stage: 'attacks', logLevel: 'SILENT', speed: 300 });
  try {
    await seedAttackData(stack);
    console.log(JSON.stringify(await runApiAttacks(stack)));
  } finally {
    await stack.stop();
  }
  process.exit(0);
}
