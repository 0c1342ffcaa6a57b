/**
 * The functions as the deployment bundles them (the MemoryFunction construct running esbuild,
 * as bench/cold-start.ts does): each within 1,024 KB, and the api bundle, built
 * without the modules the bundling leaves out (LEFT_OUT_MODULES), still serving MCP — loaded
 * in a fresh Node process as the Lambda runtime loads it, outside the project's node_modules.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFunction, type FunctionBundle } from '../../bench/cold-start.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const FUNCTIONS = readdirSync(join(ROOT, 'functions')).filter((f) =>
  statSync(join(ROOT, 'functions', f)).isDirectory(),
);

/** Requires the bundle and answers each JSON-RPC message in argv[1] through POST /v1/mcp, printing the answers. */
const SCRIPT = `
const { handler } = require(process.env.BUNDLE);
const context = { functionName: 'api', functionVersion: '$LATEST', invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:api', memoryLimitInMB: '256',
  awsRequestId: 'bundle-test', logGroupName: '/aws/lambda/api', logStreamName: 'test', getRemainingTimeInMillis: () => 30000, callbackWaitsForEmptyEventLoop: false };
const event = (message) => ({
  version: '2.0', routeKey: '$default', rawPath: '/v1/mcp', rawQueryString: '', isBase64Encoded: false, body: JSON.stringify(message),
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  requestContext: { http: { method: 'POST', path: '/v1/mcp' }, domainName: 'localhost', authorizer: { jwt: { claims: { sub: 'alice', username: 'alice' } } } },
});
(async () => {
  const answers = [];
  for (const message of JSON.parse(process.argv[1])) answers.push(await handler(event(message), context));
  console.log(JSON.stringify(answers));
})().catch((error) => { console.error(error); process.exit(1); });
`;

let outdir: string;
const bundles = new Map<string, FunctionBundle>();

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'bundle-test-'));
  const stack = new Stack(new App({ outdir }), 'BundleTest');
  for (const fn of FUNCTIONS) bundles.set(fn, bundleFunction(stack, fn));
}, 180_000);
afterAll(() => {
  rmSync(outdir, { recursive: true, force: true });
});

type Answer = { statusCode: number; body: Record<string, unknown> };

/** The api bundle's answers to these MCP messages (JSON-RPC bodies, parsed). */
function mcpThroughBundle(messages: unknown[]): Answer[] {
  const api = bundles.get('api');
  if (!api) throw new Error('no api bundle');
  const res = spawnSync(process.execPath, ['-e', SCRIPT, JSON.stringify(messages)], {
    encoding: 'utf8',
    cwd: api.dir,
    env: bundleEnv(api),
    timeout: 30_000,
  });
  if (res.status !== 0) throw new Error(`the api bundle failed: ${res.stderr.slice(0, 2000)}`);
  const answers = JSON.parse(res.stdout.trim().split('\n').at(-1) ?? '[]') as Array<{
    statusCode: number;
    body: string;
  }>;
  return answers.map((a) => ({ statusCode: a.statusCode, body: JSON.parse(a.body) as Record<string, unknown> }));
}

/** The api function's environment, as the stack sets it, for a bundle run outside Lambda. */
function bundleEnv(api: FunctionBundle): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    BUNDLE: api.bundle,
    AWS_REGION: 'us-east-1',
    STAGE: 'bundle',
    TABLE_NAME: 'memory',
    BUCKET_NAME: 'memory',
    SLEEP_TIME_CONFIG: '{}',
    JOB_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/jobs',
    TURN_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/turn',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}

/**
 * The Authorization headers of the AWS requests the api bundle makes for one search of alice's
 * memory, sent (AWS_ENDPOINT_URL) to a local server that refuses each (a 400 the SDK does not retry).
 */
async function signedRequests(env: Record<string, string>): Promise<string[]> {
  const api = bundles.get('api');
  if (!api) throw new Error('no api bundle');
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(String(req.headers.authorization ?? ''));
    req.resume();
    res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'bundle-test' });
    res.end(
      JSON.stringify({
        __type: 'com.amazon.coral.validate#ValidationException',
        message: 'refused by the bundle test',
      }),
    );
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const search = [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'memory_search', arguments: { userId: 'alice', query: 'camping' } },
    },
  ];
  const child = spawn(process.execPath, ['-e', SCRIPT, JSON.stringify(search)], {
    cwd: api.dir,
    env: { ...bundleEnv(api), AWS_ENDPOINT_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, ...env },
  });
  await new Promise((done) => child.once('exit', done));
  server.close();
  return seen;
}

describe('the functions as deployed', () => {
  it.each(FUNCTIONS)('the %s bundle is at most 1,024 KB', (fn) => {
    const bundle = bundles.get(fn);
    expect(bundle?.esm).toBe(false);
    expect(statSync(bundle?.bundle ?? '').size / 1024).toBeLessThanOrEqual(1024);
  });

  it('the api bundle serves MCP: initialize, tools/list with JSON Schemas, tools/call validated and authorised', () => {
    const answers = mcpThroughBundle([
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bundle-test', version: '1' } },
      },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      // No query: the SDK checks the arguments against the tool's zod 4 input schema.
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'memory_search', arguments: { userId: 'alice' } },
      },
      // Another user's memory: refused by the route's authorisation before any AWS request.
      {
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'memory_search', arguments: { userId: 'bob', query: 'camping' } },
      },
    ]);
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200]);
    const [init, list, invalid, refused] = answers as [Answer, Answer, Answer, Answer];
    expect(init.body.result).toMatchObject({ serverInfo: { name: 'reflective-memory' }, capabilities: { tools: {} } });
    const tools = (
      list.body.result as {
        tools: Array<{ name: string; inputSchema: { properties: Record<string, unknown>; required?: string[] } }>;
      }
    ).tools;
    expect(tools.map((t) => t.name).sort()).toEqual([
      'memory_forget',
      'memory_forget_item',
      'memory_retrieve',
      'memory_save',
      'memory_search',
    ]);
    const search = tools.find((t) => t.name === 'memory_search');
    expect(Object.keys(search?.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['userId', 'query']));
    expect(search?.inputSchema.required).toEqual(expect.arrayContaining(['userId', 'query']));
    expect(invalid.body.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringContaining('query') }],
    });
    expect(refused.body.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringContaining('may not act on user bob') }],
    });
  });

  it("signs its AWS requests with the environment's credentials, where Lambda puts the role's (the bundled credential chain)", async () => {
    const role = { AWS_ACCESS_KEY_ID: 'ASIABUNDLETEST', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'token' };
    const signed = await signedRequests(role);
    expect(signed.length).toBeGreaterThan(0);
    for (const header of signed) expect(header).toMatch(/^AWS4-HMAC-SHA256 Credential=ASIABUNDLETEST\//);
    // Without them there is no other source to fall back on: nothing is sent.
    expect(await signedRequests({})).toEqual([]);
  });
});
