/**
 * The memory API as Model Context Protocol tools, served by the official
 * TypeScript SDK over Streamable HTTP at `POST /v1/mcp`, behind the same JWT as every /v1
 * route (the HTTP API's authorizer in the cloud, the local server's tokens here).
 *
 * Stateless: each request gets its own server and transport (no session id; answers are JSON,
 * not an event stream), as the SDK's Web-standard transport allows with `sessionIdGenerator`
 * unset — a Lambda invocation keeps nothing between requests. The tools' input schemas are
 * the contract's own zod shapes plus the `userId` a route takes from its path, and each tool
 * runs its route's operation through the same `invoke` as HTTP: the same parsing, the same
 * per-user authorisation, the same redaction, the same answer.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import type { Principal } from '../../lib/memory-api/access.js';
import { type Route, routes } from './contract.js';
import { RetrieveRequestShape, SaveRequestSchema, SearchRequestSchema } from './contract/memory.js';
import { ItemId, UserParam } from './contract/shared.js';
import { DeleteQuerySchema, ForgetRequestShape } from './contract/users.js';
import type { Invoke } from './invoke.js';

const routeOf = (operationId: string): Route => {
  const route = (routes as readonly Route[]).find((r) => r.operationId === operationId);
  if (!route) throw new Error(`no route ${operationId}`);
  return route;
};

const asResult = (answer: { status: number; body: unknown }): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(answer.body) }],
  ...(answer.status === 200 ? { structuredContent: answer.body as Record<string, unknown> } : { isError: true }),
});

/**
 * The SDK's server checks a JSON Schema in one place only: a client's answer to an
 * elicitation (Server.elicitInput) against the schema it asked for. This server never
 * elicits, so it needs no validator; without this option the SDK would build an Ajv instance
 * for every server (every request here). The Lambda bundle leaves Ajv out
 * (LEFT_OUT_MODULES, infra/constructs/memory-function.ts).
 */
const NO_ELICITATION: jsonSchemaValidator = {
  getValidator: () => {
    throw new Error('this MCP server never elicits input, so it validates no JSON Schema');
  },
};

/** The tools, each one route of the contract. */
function serverFor(principal: Principal, invoke: Invoke): McpServer {
  const server = new McpServer({ name: 'reflective-memory', version: '1' }, { jsonSchemaValidator: NO_ELICITATION });
  const body = (args: Record<string, unknown>) => {
    const { userId: _, ...rest } = args;
    return rest;
  };
  const call = (operationId: string, args: Record<string, unknown>, params: Record<string, unknown> = {}) =>
    invoke(routeOf(operationId), principal, { params: { userId: args.userId, ...params }, body: () => body(args) }).then(asResult);
  server.registerTool(
    'memory_search',
    { description: routeOf('memorySearch').summary, inputSchema: { ...UserParam.shape, ...SearchRequestSchema.shape } },
    (args) => call('memorySearch', args),
  );
  server.registerTool(
    'memory_save',
    { description: routeOf('memorySave').summary, inputSchema: { ...UserParam.shape, ...SaveRequestSchema.shape } },
    (args) => call('memorySave', args),
  );
  server.registerTool(
    'memory_retrieve',
    { description: routeOf('memoryRetrieve').summary, inputSchema: { ...UserParam.shape, ...RetrieveRequestShape } },
    (args) => call('memoryRetrieve', args),
  );
  server.registerTool(
    'memory_forget_item',
    {
      description: routeOf('itemDelete').summary,
      inputSchema: { ...UserParam.shape, id: ItemId, reason: DeleteQuerySchema.shape.reason },
    },
    (args) => invoke(routeOf('itemDelete'), principal, { params: { userId: args.userId, id: args.id }, query: args.reason === undefined ? {} : { reason: args.reason }, body: () => undefined }).then(asResult),
  );
  server.registerTool(
    'memory_forget',
    { description: routeOf('memoryForget').summary, inputSchema: { ...UserParam.shape, ...ForgetRequestShape } },
    (args) => call('memoryForget', args),
  );
  return server;
}

/** One MCP request (a JSON-RPC message over POST), answered by a fresh stateless server. */
export async function serveMcp(event: APIGatewayProxyEventV2, principal: Principal, invoke: Invoke): Promise<APIGatewayProxyResultV2> {
  // No sessions, so no stream to resume (GET) or session to end (DELETE): POST only.
  if (event.requestContext.http.method !== 'POST') {
    return { statusCode: 405, headers: { allow: 'POST', 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless (POST only)' }, id: null }) };
  }
  const server = serverFor(principal, invoke);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const text = event.body === undefined ? undefined : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    const headers = new Headers(Object.entries(event.headers ?? {}).flatMap(([k, v]) => (v === undefined ? [] : [[k, v] as [string, string]])));
    const request = new Request(`https://${event.requestContext.domainName ?? 'localhost'}${event.rawPath}`, {
      method: 'POST',
      headers,
      ...(text !== undefined ? { body: text } : {}),
    });
    const response = await transport.handleRequest(request);
    return { statusCode: response.status, headers: Object.fromEntries(response.headers.entries()), body: await response.text() };
  } finally {
    await server.close();
  }
}
