/**
 * Tokens for a smoke run against a deployed stage.
 *
 * With the stage's Cognito pool (stateful outputs UserPoolId, UserPoolClientId): a temporary
 * user whose username is the smoke user's id — an access token acts on its own `username`
 * (lib/memory-api/access.ts) — is created, given a random permanent password, signed in, and
 * deleted when the run ends. AWS documents each call:
 * - AdminCreateUser with MessageAction SUPPRESS sends no invitation; the user would wait in
 *   FORCE_CHANGE_PASSWORD:
 *   https://docs.aws.amazon.com/cognito-user-identity-pools/latest/APIReference/API_AdminCreateUser.html
 * - AdminSetUserPassword with Permanent true makes the user CONFIRMED, so it can sign in
 *   at once:
 *   https://docs.aws.amazon.com/cognito-user-identity-pools/latest/APIReference/API_AdminSetUserPassword.html
 * - InitiateAuth with USER_PASSWORD_AUTH (USERNAME, PASSWORD) answers the tokens; the app
 *   client must allow the flow (infra/stacks/stateful-stack.ts: authFlows.userPassword).
 *   Cognito does not evaluate IAM for it:
 *   https://docs.aws.amazon.com/cognito-user-identity-pools/latest/APIReference/API_InitiateAuth.html
 * - AdminDeleteUser removes the user:
 *   https://docs.aws.amazon.com/cognito-user-identity-pools/latest/APIReference/API_AdminDeleteUser.html
 * The Admin* calls need IAM: cognito-idp:AdminCreateUser, cognito-idp:AdminSetUserPassword,
 * cognito-idp:AdminDeleteUser on the pool
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoncognitouserpools.html).
 * The access token is what the API takes: the HTTP API's JWT authorizer checks its
 * `client_id` against the audience when it has no `aud`
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-troubleshooting-jwt.html).
 *
 * A stage that trusts its own OIDC issuer has no pool here: the caller brings a token.
 */
import { randomBytes } from 'node:crypto';
import {
  AdminCreateUserCommand,
  AdminDeleteUserCommand,
  AdminSetUserPasswordCommand,
  type CognitoIdentityProviderClient,
  InitiateAuthCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { principalFromClaims } from '../../lib/memory-api/access.js';
import type { SmokeAuth } from './target.js';

/**
 * A password the pool's policy accepts (infra/stacks/stateful-stack.ts: at least 8
 * characters with lower and upper case, a digit and a symbol), never shown or stored.
 */
export function randomPassword(): string {
  return `${randomBytes(24).toString('base64url')}aZ7!`;
}

export function cognitoAuth(
  client: CognitoIdentityProviderClient,
  pool: { userPoolId: string; clientId: string },
): SmokeAuth {
  let created: string | null = null;
  return {
    async token(userId) {
      await client.send(
        new AdminCreateUserCommand({ UserPoolId: pool.userPoolId, Username: userId, MessageAction: 'SUPPRESS' }),
      );
      created = userId;
      const password = randomPassword();
      await client.send(
        new AdminSetUserPasswordCommand({
          UserPoolId: pool.userPoolId,
          Username: userId,
          Password: password,
          Permanent: true,
        }),
      );
      const res = await client.send(
        new InitiateAuthCommand({
          AuthFlow: 'USER_PASSWORD_AUTH',
          ClientId: pool.clientId,
          AuthParameters: { USERNAME: userId, PASSWORD: password },
        }),
      );
      const token = res.AuthenticationResult?.AccessToken;
      if (!token)
        throw new Error(
          `Cognito answered ${res.ChallengeName ? `the challenge ${res.ChallengeName}` : 'no tokens'} instead of an access token (does the pool require MFA?)`,
        );
      return {
        token,
        detail: `temporary Cognito user ${userId} in ${pool.userPoolId}, signed in with USER_PASSWORD_AUTH (access token)`,
      };
    },
    async cleanup() {
      if (created === null) return null;
      await client.send(new AdminDeleteUserCommand({ UserPoolId: pool.userPoolId, Username: created }));
      const removed = `Cognito user ${created} deleted from ${pool.userPoolId}`;
      created = null;
      return removed;
    },
  };
}

/** The claims of a JWT, read without verifying it (the API verifies; this only picks the user). */
export function unverifiedClaims(token: string): Record<string, unknown> {
  const payload = token.split('.')[1];
  if (payload === undefined) throw new Error('--token is not a JWT (header.payload.signature)');
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new Error('--token is not a JWT: its payload is not base64url JSON');
  }
}

/**
 * A token the caller brings (a stage trusting its own OIDC issuer). The run's user is the
 * one the token acts on — `userId` when given and allowed, else the token's own — unless the
 * token is an administrator's, which may act on a fresh user.
 */
export function givenTokenAuth(token: string, userId?: string): SmokeAuth {
  const principal = principalFromClaims(unverifiedClaims(token));
  if (!principal) throw new Error('--token names no subject (sub or username)');
  let fixedUserId: string | undefined = userId;
  if (principal.users !== '*') {
    if (userId !== undefined && !principal.users.includes(userId))
      throw new Error(`--token may not act on ${userId}; it may act on ${principal.users.join(', ')}`);
    fixedUserId = userId ?? principal.users[0];
  }
  return {
    token: async () => ({
      token,
      detail: `the given token (subject ${principal.subject}${principal.admin ? ', administrator' : ''})`,
    }),
    cleanup: async () => null,
    ...(fixedUserId !== undefined ? { fixedUserId } : {}),
  };
}
