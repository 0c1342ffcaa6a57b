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
import { verifyToken } from './tokens.js';

export type HttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

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

export async function startHttpApi(options: {
  handler: HttpHandler;
  tokenSecret: string;
  functionName: string;
  timeoutSeconds: number;
  port?: number;
  /** Told of every handler invocation (benchmarks time them). */
  observe?: InvocationObserver;
}): Promise<LocalHttpApi> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    state.requests += 1;
    void (async () => {
      const send = (status: number, headers: Record<string, string>, body: string) => {
        res.writeHead(status, headers);
        res.end(body);
      };
      try {
        const url = new URL(req.url ?? '/', 'http://localhost');
        const body = await readBody(req);
        if (body === null) return send(413, { 'content-type': 'application/json' }, JSON.stringify({ message: 'Request Entity Too Large' }));
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(',') : v;
        let claims: Record<string, unknown> | undefined;
        if (url.pathname.startsWith('/v1/')) {
          const m = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '');
          const verified = m?.[1] ? await verifyToken(options.tokenSecret, m[1]) : null;
          if (!verified) return send(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }, JSON.stringify({ message: 'Unauthorized' }));
          claims = verified;
        }
        const query: Record<string, string> = {};
        for (const [k, v] of url.searchParams) query[k] = k in query ? `${query[k]},${v}` : v;
        const method = (req.method ?? 'GET').toUpperCase();
        const event = {
          version: '2.0',
          routeKey: '$default',
          rawPath: url.pathname,
          rawQueryString: url.search.replace(/^\?/, ''),
          headers,
          ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
          requestContext: {
            accountId: '000000000000',
            apiId: 'local',
            domainName: headers.host ?? 'localhost',
            domainPrefix: 'local',
            http: { method, path: url.pathname, protocol: 'HTTP/1.1', sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
            requestId: `local-${state.requests}`,
            routeKey: '$default',
            stage: '$default',
            time: new Date().toISOString(),
            timeEpoch: Date.now(),
            ...(claims ? { authorizer: { jwt: { claims, scopes: null } } } : {}),
          },
          body: body.length > 0 ? body.toString('utf8') : undefined,
          isBase64Encoded: false,
        } as unknown as APIGatewayProxyEventV2;
        const started = performance.now();
        const result = await options.handler(event, lambdaContext(options.functionName, options.timeoutSeconds));
        options.observe?.({ fn: 'api', ms: performance.now() - started, records: [], finishedAt: Date.now() });
        const outHeaders: Record<string, string> = {};
        for (const [k, v] of Object.entries(result.headers ?? {})) outHeaders[k] = String(v);
        send(result.statusCode ?? 200, outHeaders, typeof result.body === 'string' ? result.body : '');
      } catch (error) {
        send(500, { 'content-type': 'application/json' }, JSON.stringify({ message: `local API error: ${(error as Error).message}` }));
      }
    })();
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
