/**
 * Who may do what (DESIGN: per-user isolation; issue: GLOBAL is read-only to users).
 * A principal is what a verified credential says: its subject, the users it may act on,
 * and whether it is an administrator. Credentials come from the JWT authorizer in the
 * cloud (Cognito or any OIDC issuer) and from locally signed tokens on a laptop; both end
 * as the same claims, read here.
 */
import { GLOBAL_USER } from '../items/memory-item.js';

export const ADMIN_GROUP = 'memory-admin';

export interface Principal {
  subject: string;
  /** User ids the credential may act on; `*` for all. */
  users: '*' | readonly string[];
  admin: boolean;
}

export type Access = 'read' | 'write';

export type Decision = { allowed: true } | { allowed: false; reason: string };

/** Claims arrive as strings or arrays; API Gateway flattens arrays to "[a b]". */
const list = (value: unknown): string[] => {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value !== 'string') return [];
  return value
    .replace(/^\[|\]$/g, '')
    .split(/[\s,]+/)
    .filter(Boolean);
};

/**
 * - `cognito:groups` (or `groups`) holding `memory-admin` → every user, GLOBAL writable;
 * - `memory_users`: the user ids this credential may act on (space-separated);
 * - otherwise the token's own user: `username`, `cognito:username`, else `sub`.
 */
export function principalFromClaims(claims: Record<string, unknown> | undefined): Principal | null {
  if (!claims) return null;
  const subject = String(claims.sub ?? claims.username ?? '');
  if (subject === '') return null;
  const groups = [...list(claims['cognito:groups']), ...list(claims.groups)];
  if (groups.includes(ADMIN_GROUP)) return { subject, users: '*', admin: true };
  const scoped = list(claims.memory_users);
  if (scoped.length > 0) return { subject, users: scoped.includes('*') ? '*' : scoped, admin: false };
  const own = claims.username ?? claims['cognito:username'] ?? claims.sub;
  return { subject, users: [String(own)], admin: false };
}

/** The whole stage's figures (every user's): administrators only. */
export function authorizeStage(principal: Principal): Decision {
  return principal.admin
    ? { allowed: true }
    : { allowed: false, reason: "only an administrator may read the whole stage's figures" };
}

export function authorize(principal: Principal, userId: string, access: Access): Decision {
  if (userId === GLOBAL_USER) {
    if (access === 'read' || principal.admin) return { allowed: true };
    return { allowed: false, reason: 'GLOBAL memory is read-only to users' };
  }
  if (principal.users === '*' || principal.users.includes(userId)) return { allowed: true };
  return { allowed: false, reason: `this credential may not act on user ${userId}` };
}
