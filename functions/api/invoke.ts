/**
 * One operation of the memory API as a function: what a /v1 route and an MCP tool both call
 * (routes.ts makes it; mcp.ts uses it), so both answer the same.
 */
import type { Principal } from '../../lib/memory-api/access.js';
import type { Route } from './contract.js';

/** Where the MCP tools are served (functions/api/mcp.ts). */
export const MCP_PATH = '/v1/mcp';

/** What one operation answered: an HTTP status and its JSON body. */
export interface OperationAnswer {
  status: number;
  body: unknown;
}

/**
 * Run one operation as the API runs it — parse its input against the contract, authorise the
 * principal for its user, redact what it would store, run it, map errors to statuses.
 */
export type Invoke = (
  route: Route,
  principal: Principal,
  input: { params?: unknown; query?: unknown; body: () => unknown },
) => Promise<OperationAnswer>;
