/**
 * The HTTP API on localhost: what API Gateway (HTTP API, payload 2.0) and its JWT
 * authorizer do in the cloud, for the very same handler module. /v1 routes need a valid
 * bearer token (else 401, as the authorizer answers); its claims reach the handler in
 * `requestContext.authorizer.jwt.claims`. Bodies above 6 MB are refused (Lambda's limit).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { InvocationObserver } from './event-source.js';
import { lambdaContext } from './lambda-context.js';
import { httpApiEvent } from './lambda-events.js';
import { verifyToken } from './tokens.js';

export type HttpHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

const MAX_BODY_BYTES = 6 * 1024 * 1024;

export interface LocalHttpApi {
  url: string;
  requests: number;
  stop(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

type Send = (status: number, headers: Record<string, string>, body: string) => void;

/** What the JWT authorizer does for a /v1 route: the verified claims of its bearer token, or null (a 401). Other routes need none. */
async function authorizerClaims(
  path: string,
  headers: Record<string, string>,
  tokenSecret: string,
): Promise<Record<string, unknown> | null | undefined> {
  if (!path.startsWith('/v1/')) return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '');
  return m?.[1] ? await verifyToken(tokenSecret, m[1]) : null;
}

/** The request's headers, names in lower case, repeated ones joined by commas. */
function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(',') : v;
  return headers;
}

function queryOf(url: URL): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = k in query ? `${query[k]},${v}` : v;
  return query;
}

interface ApiOptions {
  handler: HttpHandler;
  tokenSecret: string;
  functionName: string;
  timeoutSeconds: number;
  port?: number;
  /** Told of every handler invocation (benchmarks time them). */
  observe?: InvocationObserver;
}

/** One HTTP request: API Gateway's size limit and authorizer, then the handler with its payload 2.0 event. */
async function serveRequest(req: IncomingMessage, send: Send, requestId: string, options: ApiOptions): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const body = await readBody(req);
  if (body === null)
    return send(413, { 'content-type': 'application/json' }, JSON.stringify({ message: 'Request Entity Too Large' }));
  const headers = headersOf(req);
  const claims = await authorizerClaims(url.pathname, headers, options.tokenSecret);
  if (claims === null)
    return send(
      401,
      { 'content-type': 'application/json', 'www-authenticate': 'Bearer' },
      JSON.stringify({ message: 'Unauthorized' }),
    );
  const event = httpApiEvent({
    method: (req.method ?? 'GET').toUpperCase(),
    path: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ''),
    query: queryOf(url),
    headers,
    ...(body.length > 0 ? { body: body.toString('utf8') } : {}),
    ...(claims ? { claims } : {}),
    requestId,
    sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
  });
  const started = performance.now();
  const cpu = process.cpuUsage();
  const result = await options.handler(event, lambdaContext(options.functionName, options.timeoutSeconds));
  const used = process.cpuUsage(cpu);
  options.observe?.({
    fn: 'api',
    ms: performance.now() - started,
    records: [],
    finishedAt: Date.now(),
    cpuMs: (used.user + used.system) / 1000,
  });
  const outHeaders: Record<string, string> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) outHeaders[k] = String(v);
  send(result.statusCode ?? 200, outHeaders, typeof result.body === 'string' ? result.body : '');
}

export async function startHttpApi(options: ApiOptions): Promise<LocalHttpApi> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    state.requests += 1;
    const send: Send = (status, headers, body) => {
      res.writeHead(status, headers);
      res.end(body);
    };
    serveRequest(req, send, `local-${state.requests}`, options).catch((error: unknown) => {
      send(
        500,
        { 'content-type': 'application/json' },
        JSON.stringify({ message: `local API error: ${(error as Error).message}` }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
