/**
 * Local credentials: HS256 JWTs signed with the local harness's secret. They carry the same
 * claims the cloud's JWT authorizer passes on (see lib/memory-api/access.ts): the admin token
 * is in group `memory-admin`; a user-scoped token names its users in `memory_users`.
 * `npm run token -- --user u1 [--user u2]` mints one for a running stack.
 */
import { jwtVerify, SignJWT } from 'jose';
import { ADMIN_GROUP } from '../../lib/memory-api/access.js';

export const LOCAL_ISSUER = 'reflective-memory-local';
export const LOCAL_AUDIENCE = 'reflective-memory-api';

const key = (secret: string) => new TextEncoder().encode(secret);

export interface LocalClaims {
  sub: string;
  /** User ids the token may act on (space-separated in the token). */
  users?: readonly string[];
  admin?: boolean;
}

export async function mintToken(secret: string, claims: LocalClaims, ttlSeconds = 7 * 86_400): Promise<string> {
  const payload: Record<string, unknown> = {};
  if (claims.admin) payload['cognito:groups'] = [ADMIN_GROUP];
  if (claims.users && claims.users.length > 0) payload.memory_users = claims.users.join(' ');
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuer(LOCAL_ISSUER)
    .setAudience(LOCAL_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(key(secret));
}

/** The verified claims, or null for a missing, malformed, forged or expired token (what the JWT authorizer does). */
export async function verifyToken(secret: string, token: string): Promise<Record<string, unknown> | null> {
  try {
    const { payload } = await jwtVerify(token, key(secret), {
      issuer: LOCAL_ISSUER,
      audience: LOCAL_AUDIENCE,
      algorithms: ['HS256'],
    });
    return payload as Record<string, unknown>;
  } catch {
    return null;
  }
}
