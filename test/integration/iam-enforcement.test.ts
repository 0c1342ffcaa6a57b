/**
 * IAM enforced on the local stack, from the synthesized stage: with the grants the stack had
 * before issue 17 (the signal function without s3:PutObjectTagging, the reflector and the
 * API without s3:ListBucket), the first deploy would have ingested nothing and answered a
 * new user's search with an error — and the local stack now shows it, naming the actions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../infra/local/stack.js';
import { type FunctionKey, PERMISSIONS, type Permissions } from '../../infra/permissions.js';
import { iamDenials } from '../helpers/iam.js';

/** infra/permissions.ts as it was: no tagging grant on turn documents, no bucket listing. */
function oldGrants(): Record<FunctionKey, Permissions> {
  const grants = structuredClone(PERMISSIONS) as Record<FunctionKey, Permissions>;
  grants.signal = { ...grants.signal, s3: { ...grants.signal.s3, 'users/*/turns/*': ['PutObject'] } };
  for (const fn of Object.keys(grants) as FunctionKey[]) grants[fn] = { ...grants[fn], listBucket: false };
  return grants;
}

const USER = 'iam-old-grants';
let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({ stage: 'iamtest', logLevel: 'SILENT', speed: 300, iam: { permissions: oldGrants() } });
}, 180_000);
afterAll(async () => {
  await stack?.stop();
});

const until = async (what: string, done: () => boolean, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; denials so far: ${iamDenials(stack).join('; ')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
};

describe('the old grants, enforced locally', () => {
  it('deny every turn document (s3:PutObjectTagging) and a new user’s knowledge index (s3:ListBucket), naming the action', async () => {
    const at = Date.now();
    await stack.publisher.publish(
      [1, 2, 3].map((turnId) => ({
        type: 'turn.saved' as const,
        version: 1 as const,
        userId: USER,
        sessionId: 's-1',
        turnId,
        timestamp: new Date(at + turnId * 1000).toISOString(),
        query: `I keep a reef tank, message ${turnId}`,
        response: 'Noted.',
      })),
    );
    const search = await fetch(`${stack.info.apiUrl}/v1/users/${USER}/memory/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.info.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'reef tank' }),
    });
    // The knowledge index of a user with none is a missing key: without ListBucket S3 answers 403, not 404.
    expect(search.status).toBe(500);
    await until('the signal function to be denied', () => iamDenials(stack).some((d) => d.includes('s3:PutObjectTagging')));
    const denials = iamDenials(stack);
    expect(denials.find((d) => d.startsWith('signal:'))).toMatch(/^signal: S3\.PutObject — s3:PutObjectTagging on arn:aws:s3:::reflective-memory-iamtest-000000000000\/users\/iam-old-grants\/turns\//);
    expect(denials.find((d) => d.startsWith('api:'))).toMatch(/^api: S3\.GetObject of a missing key — s3:ListBucket on arn:aws:s3:::reflective-memory-iamtest-000000000000 /);
    expect(stack.iam?.stats.denied).toBeGreaterThanOrEqual(2);
    expect((await stack.summary()).turns).toBe(0);
  });
});
