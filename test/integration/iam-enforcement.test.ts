/**
 * IAM enforced on the local harness, from the synthesized stage: with the grants the stack once
 * had, the first deploy would have ingested nothing (the signal function without
 * s3:PutObjectTagging) and failed every reflection (the reflector without s3:ListBucket: its
 * lookup of a recorded model answer before each model call read a key that did not exist
 * yet, which S3 answers 403, not 404, to a caller that may not list the bucket). The local
 * stack shows the first, naming the action. Now the lookup reads S3 only when an
 * item names an object, so a reflection reads no missing key: without s3:ListBucket it
 * completes (the grant stays, for a forget's listing and the rare reads of a key another
 * writer just retired).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TurnSaved } from '../../events/turn-saved.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { type FunctionKey, PERMISSIONS, type Permissions } from '../../infra/permissions.js';
import { iamDenials } from '../helpers/iam.js';

/** infra/permissions.ts with one grant changed. */
function grantsWith(fn: FunctionKey, change: (p: Permissions) => Permissions): Record<FunctionKey, Permissions> {
  const grants = structuredClone(PERMISSIONS) as Record<FunctionKey, Permissions>;
  grants[fn] = change(grants[fn]);
  return grants;
}

const turns = (userId: string, n: number): TurnSaved[] =>
  Array.from({ length: n }, (_, i) => ({
    type: 'turn.saved',
    version: 1,
    userId,
    sessionId: 's-1',
    turnId: i + 1,
    timestamp: new Date(Date.UTC(2026, 1, 6, 14, i)).toISOString(),
    query: `I keep a reef tank with clownfish, message ${i + 1}`,
    response: 'Noted.',
  }));

/** Turns whose documents are too large to go inline in the turn index: each is an S3 object. */
const largeTurns = (userId: string, n: number): TurnSaved[] =>
  turns(userId, n).map((t) => ({ ...t, response: `Noted: ${'the reef tank log. '.repeat(300)}` }));

let stack: LocalHarness | undefined;
afterEach(async () => {
  await stack?.stop();
  stack = undefined;
});

const until = async (what: string, done: () => boolean, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; denials so far: ${stack ? iamDenials(stack).join('; ') : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
};

describe('the old grants, enforced locally', () => {
  it('deny every turn document without s3:PutObjectTagging, naming the action', async () => {
    const permissions = grantsWith('signal', (p) => ({ ...p, s3: { ...p.s3, 'users/*/turns/*': ['PutObject'] } }));
    stack = await startHarness({ stage: 'iamtag', logLevel: 'SILENT', speed: 300, iam: { permissions } });
    const local = stack;
    await local.publisher.publish(largeTurns('no-tagging', 3));
    await until('the signal function to be denied', () => iamDenials(local).length > 0);
    expect(iamDenials(local)[0]).toMatch(
      /^signal: S3\.PutObject — s3:PutObjectTagging on arn:aws:s3:::reflective-memory-iamtag-000000000000-us-east-1\/users\/no-tagging\/turns\//,
    );
    expect((await local.report()).turns).toBe(0);
  }, 120_000);

  it('reflect without s3:ListBucket: no reflection reads a missing key, which S3 would answer 403', async () => {
    const permissions = grantsWith('reflector', (p) => ({ ...p, listBucket: false }));
    stack = await startHarness({ stage: 'iamlist', logLevel: 'SILENT', speed: 300, iam: { permissions } });
    const local = stack;
    await local.publisher.publish(turns('no-listing', 10));
    await local.waitUntilDrained({ timeoutMs: 60_000 });
    expect(iamDenials(local)).toEqual([]);
    expect(await local.report()).toMatchObject({ batches: 1, batchesAborted: 0 });
  }, 120_000);
});
