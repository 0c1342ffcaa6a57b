/**
 * The attack suite (bench/api-attacks.ts) against the local API: other users' ids on every
 * route, path and body tricks, GLOBAL writes, forged and expired credentials — none may
 * succeed. The same suite run with an administrator's token must "succeed", or the suite
 * could not tell.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApiAttacks, SECRET, seedAttackData, VICTIM, VICTIM_SESSION } from '../../bench/api-attacks.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';

let stack: LocalHarness;

beforeAll(async () => {
  stack = await startHarness({ stage: 'attacks', logLevel: 'SILENT', speed: 300 });
  await seedAttackData(stack);
}, 180_000);
afterAll(async () => {
  await stack?.stop();
});

describe('the memory API under attack', () => {
  it('holds the victim’s secret (the precondition: there is something to steal)', async () => {
    const res = await fetch(`${stack.info.apiUrl}/v1/users/${VICTIM}/memory/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.info.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: SECRET, limit: 5 }),
    });
    expect(await res.text()).toContain(SECRET);
    // The victim's ephemeral entry too, to a search in the victim's session: the session-naming tricks have a target.
    const inSession = await fetch(`${stack.info.apiUrl}/v1/users/${VICTIM}/memory/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.info.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `typing ${SECRET} into a form`,
        limit: 5,
        filters: { tier: ['ephemeral'] },
        sessionId: VICTIM_SESSION,
      }),
    });
    expect(((await inSession.json()) as { results: Array<{ tier: string }> }).results.map((r) => r.tier)).toEqual([
      'ephemeral',
    ]);
  });

  it('lets no attack succeed', async () => {
    const report = await runApiAttacks(stack);
    expect(report.tried).toBeGreaterThan(100);
    expect(Object.keys(report.byKind).sort()).toEqual([
      'GLOBAL write',
      'body trick',
      'credentials',
      'mcp',
      'other user',
      'path trick',
    ]);
    expect(report.succeeded).toEqual([]);
  });

  it('notices success: with an administrator’s token the same requests get through', async () => {
    const report = await runApiAttacks(stack, { as: stack.info.adminToken });
    expect(report.succeeded.filter((s) => s.startsWith('other user')).length).toBeGreaterThan(10);
    // Through MCP too: the victim's memory is searched and read (and no tokenless call gets in).
    expect(report.succeeded.filter((s) => s.startsWith('mcp:') && s.includes(VICTIM)).length).toBeGreaterThanOrEqual(2);
    expect(report.succeeded.some((s) => s.startsWith('mcp:') && s.includes('without a token'))).toBe(false);
    expect(report.succeeded.some((s) => s.startsWith('credentials'))).toBe(false);
  });
});
