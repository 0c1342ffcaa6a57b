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
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import * as z from 'zod';
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

type Args = Record<string, unknown>;

interface ToolSpec {
  name: string;
  operationId: string;
  input: z.ZodRawShape;
  run?: (args: Args) => { params: Args; query?: unknown };
}

/** The tools, each one route of the contract; the route's own parsing checks the arguments. */
const TOOLS: readonly ToolSpec[] = [
  { name: 'memory_search', operationId: 'memorySearch', input: { ...UserParam.shape, ...SearchRequestSchema.shape } },
  { name: 'memory_save', operationId: 'memorySave', input: { ...UserParam.shape, ...SaveRequestSchema.shape } },
  { name: 'memory_retrieve', operationId: 'memoryRetrieve', input: { ...UserParam.shape, ...RetrieveRequestShape } },
  {
    name: 'memory_forget_item',
    operationId: 'itemDelete',
    input: { ...UserParam.shape, id: ItemId, reason: DeleteQuerySchema.shape.reason },
    run: (args) => ({
      params: { userId: args.userId, id: args.id },
      query: args.reason === undefined ? {} : { reason: args.reason },
    }),
  },
  { name: 'memory_forget', operationId: 'memoryForget', input: { ...UserParam.shape, ...ForgetRequestShape } },
];

/** A tool as tools/list describes it: its input as the JSON Schema of what a caller sends. */
const listed = (tool: ToolSpec): Tool => ({
  name: tool.name,
  description: routeOf(tool.operationId).summary,
  inputSchema: z.toJSONSchema(z.object(tool.input), { io: 'input' }) as Tool['inputSchema'],
});

/**
 * The SDK's low-level server with a tools/list and a tools/call handler: the high-level
 * McpServer would add 15 KB to a bundle at its size cap (infra/constructs/memory-function.ts)
 * for what these two handlers do. Arguments are checked once, by the route's own parsing, so a
 * bad argument is a tool error naming its field, as over HTTP.
 */
function serverFor(principal: Principal, invoke: Invoke): Server {
  const server = new Server(
    { name: 'reflective-memory', version: '1' },
    { capabilities: { tools: {} }, jsonSchemaValidator: NO_ELICITATION },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS.map(listed) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    const args: Args = request.params.arguments ?? {};
    const { userId, ...rest } = args;
    const { params, query } = tool.run?.(args) ?? { params: { userId } };
    const body = tool.run ? undefined : rest;
    return asResult(
      await invoke(routeOf(tool.operationId), principal, { params, ...(query ? { query } : {}), body: () => body }),
    );
  });
  return server;
}

/** One MCP request (a JSON-RPC message over POST), answered by a fresh stateless server. */
export async function serveMcp(
  event: APIGatewayProxyEventV2,
  principal: Principal,
  invoke: Invoke,
): Promise<APIGatewayProxyResultV2> {
  // No sessions, so no stream to resume (GET) or session to end (DELETE): POST only.
  if (event.requestContext.http.method !== 'POST') {
    return {
      statusCode: 405,
      headers: { allow: 'POST', 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Method not allowed: this MCP server is stateless (POST only)' },
        id: null,
      }),
    };
  }
  const server = serverFor(principal, invoke);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    const text =
      event.body === undefined
        ? undefined
        : event.isBase64Encoded
          ? Buffer.from(event.body, 'base64').toString('utf8')
          : event.body;
    const headers = new Headers(
      Object.entries(event.headers ?? {}).flatMap(([k, v]) => (v === undefined ? [] : [[k, v] as [string, string]])),
    );
    const request = new Request(`https://${event.requestContext.domainName ?? 'localhost'}${event.rawPath}`, {
      method: 'POST',
      headers,
      ...(text !== undefined ? { body: text } : {}),
    });
    const response = await transport.handleRequest(request);
    return {
      statusCode: response.status,
      headers: Object.fromEntries(response.headers.entries()),
      body: await response.text(),
    };
  } finally {
    await server.close();
  }
}
