/**
 * The review console end to end: `npm start` (serving), headless Debian Chromium driven by
 * playwright-core, the outcome checked through the API. CONSOLE_SCREENSHOT=path saves a
 * screenshot of the console (docs/review-console.png is one).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const USER = 'locomo-conv-26';
let server: ChildProcess;
let browser: Browser;
let info: { apiUrl: string; adminToken: string };

beforeAll(async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'rm-console-'));
  server = spawn(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'infra/local/cli.ts')], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((ready, fail) => {
    server.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('serving until stopped')) ready();
    });
    server.on('exit', (code) => fail(new Error(`npm start exited (${code}) before serving:\n${out}`)));
  });
  info = JSON.parse(readFileSync(join(cwd, '.local/stack.json'), 'utf8'));
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGINT');
    await exited;
  }
});

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${info.apiUrl}/v1/users/${USER}${path}`, {
    method,
    headers: { authorization: `Bearer ${info.adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  // biome-ignore lint/suspicious/noExplicitAny: loose test shape
  return (await res.json()) as any;
}

describe('the review console', () => {
  it('shows one user’s memory, promotes a staged item and deletes a summary', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) errors.push(m.text());
    });
    const served = await page.goto(`${info.apiUrl}/console#user=${USER}&token=${encodeURIComponent(info.adminToken)}`);
    // The page's script runs by its hash alone: no inline script but that one may run.
    expect(served?.headers()['content-security-policy']).toMatch(/script-src 'sha256-[A-Za-z0-9+/]+=*';/);

    // Every section filled from the API.
    await page.locator('#staged .staged-item').first().waitFor();
    await page.locator('#summaries .summary-item').first().waitFor();
    // Req R-SUM-5: each summary shown as its turn pair, both parts marked as a summary.
    const pair = page.locator('#summaries .summary-item').first();
    expect(await pair.locator('.summary-system').textContent()).toMatch(/^system · summary \S/);
    expect(await pair.locator('.summary-assistant').textContent()).toMatch(/^assistant · summary \S/);
    expect(await pair.locator('.meta').first().textContent()).toMatch(/^after turn \d+/);
    // Req R-SUM-10's summary quality metrics above the summaries.
    expect(await page.locator('#summaries .quality').textContent()).toMatch(
      /^\d+ summaries · \d+ deleted .* back after deletion 0/,
    );
    await page.locator('#batches table').waitFor();
    await page.locator('#assessment #trend-chart').waitFor();
    expect(await page.locator('#batches tbody tr').count()).toBeGreaterThan(0);
    // Req R-EVT-4: each batch's assessment (the offline model gives one).
    expect(await page.locator('#batches thead th').last().textContent()).toBe('assessment');
    expect(await page.locator('#batches tbody tr').first().locator('td').last().textContent()).toMatch(
      /^confidence \d\.\d\d · caution \d\.\d\d · sentiment [+-]?\d\.\d\d$/,
    );
    if (process.env.CONSOLE_SCREENSHOT)
      await page.screenshot({ path: resolve(ROOT, process.env.CONSOLE_SCREENSHOT), fullPage: false });

    // Promote the first staged item.
    const item = page.locator('#staged .staged-item').first();
    const path = await item.getAttribute('data-path');
    expect(path).toMatch(/^Knowledge_staging\//);
    await item.locator('details.history summary').click();
    await expect.poll(() => item.locator('details.history li').count()).toBeGreaterThan(0);
    // Its markdown document, rendered from the staged record (no S3 object).
    await item.locator('details.markdown summary').click();
    expect(await item.locator('details.markdown pre').textContent()).toMatch(/^---\nkind: /);
    await item.locator('button.promote').click();
    await expect.poll(() => page.locator('#status').textContent()).toContain('promoted');
    await expect.poll(() => page.locator(`#staged .staged-item[data-path="${path}"]`).count()).toBe(0);
    const decided = (await api('GET', '/review/staged?includeDecided=true')).staged.find(
      (s: { path: string }) => s.path === path,
    );
    expect(decided).toMatchObject({ status: 'promoted', review: { decision: 'promoted', by: 'local-admin' } });
    const knowledgePath = (await api('GET', '/memory/audit')).entries.find(
      (e: { itemId: string }) => e.itemId === `staged:${path?.replace('Knowledge_staging/', '')}`,
    ).to;
    expect((await api('POST', '/memory/retrieve', { path: knowledgePath })).item).toMatchObject({
      kind: 'knowledge',
      status: 'canonical',
    });
    await expect.poll(() => page.locator(`#knowledge .knowledge-item[data-path="${knowledgePath}"]`).count()).toBe(1);

    // Delete the first context summary.
    const summary = page.locator('#summaries .summary-item').first();
    const id = await summary.getAttribute('data-id');
    await summary.locator('button.delete').click();
    await expect.poll(() => page.locator('#status').textContent()).toContain(`deleted summary ${id}`);
    await expect.poll(() => page.locator(`#summaries .summary-item[data-id="${id}"]`).count()).toBe(0);
    const all = (await api('GET', '/summaries?includeDeleted=true')).summaries;
    expect(all.find((s: { id: string }) => s.id === id)).toMatchObject({ deleted: true });
    expect((await api('GET', '/summaries')).summaries.map((s: { id: string }) => s.id)).not.toContain(id);

    // Req R-DIARY: the diary's entries, each with a person's override.
    const entry = page.locator('#diary .diary-item').first();
    await entry.waitFor();
    const entryId = await entry.getAttribute('data-id');
    const wasVisible = (await entry.getAttribute('data-visible')) === 'true';
    expect(await entry.locator('.meta').first().textContent()).toMatch(
      /(reflection|observation)(written|rejected|kept|dropped)/,
    );
    await entry.locator(wasVisible ? 'button.drop' : 'button.keep').click();
    await expect
      .poll(() => page.locator('#status').textContent())
      .toContain(`${wasVisible ? 'dropped' : 'kept'} diary entry ${entryId}`);
    const after = (await api('GET', '/diary?include=all')).entries.find((e: { id: string }) => e.id === entryId);
    expect(after).toMatchObject({
      visible: !wasVisible,
      override: { decision: wasVisible ? 'drop' : 'keep', by: 'local-admin' },
    });
    await expect
      .poll(() => page.locator(`#diary .diary-item[data-id="${entryId}"]`).getAttribute('data-visible'))
      .toBe(String(!wasVisible));
    expect(errors).toEqual([]);
    await page.close();
  });
  it('searches with why each result ranked, edits and deletes a Knowledge fact, and forgets a turn after its dry run', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // What a person types into the console's prompts, in order.
    const typed: string[] = [];
    page.on('dialog', (d) => void d.accept(typed.shift() ?? ''));
    await page.goto(`${info.apiUrl}/console#user=${USER}&token=${encodeURIComponent(info.adminToken)}`);
    await page.locator('#knowledge .knowledge-item').first().waitFor();
    const [fact] = (await api('GET', '/memory/tiers/long_term?kind=knowledge&limit=500')).items as Array<{
      id: string;
      title: string;
      text: string;
    }>;
    expect(fact?.id).toMatch(/^knowledge:/);
    const id = String(fact?.id);

    // The search box: memory.search's results, each with its source turns and why it ranked.
    await page.fill('#q', String(fact?.text).split(/\s+/).slice(0, 8).join(' '));
    await page.click('#search-go');
    const result = page.locator(`#search .search-item[data-id="${id}"]`);
    await result.waitFor();
    expect(await result.locator('.why').textContent()).toMatch(
      /^why: (score|answer|window|summary|time|vector) #\d+.* · trust \d\.\d\d · recency \d\.\d\d$/,
    );
    expect(await result.locator('.meta').first().textContent()).toMatch(/^source turns \d/);

    // Edit: the new text is what the API and a new search give back.
    typed.push('The user keeps a lighthouse logbook of every storm.', 'the old text was wrong');
    await result.locator('button.edit').click();
    await expect.poll(() => page.locator('#status').textContent()).toContain(`edited ${id}`);
    expect((await api('POST', '/memory/retrieve', { id })).item.text).toBe(
      'The user keeps a lighthouse logbook of every storm.',
    );
    await page.fill('#q', 'lighthouse logbook storm');
    await page.click('#search-go');
    // The new search's rendering, not the element the edit's refresh left: its text is the new one.
    await expect.poll(() => result.locator('.text').textContent()).toContain('lighthouse logbook');

    // Delete: gone from the console's search and from retrieve.
    typed.push('not about me');
    await result.locator('button.delete').click();
    await expect.poll(() => page.locator('#status').textContent()).toContain(`deleted ${id}`);
    await expect.poll(() => result.count()).toBe(0);
    expect((await api('POST', '/memory/retrieve', { id })).error?.message).toMatch(/not found/);

    // Forget by provenance: the dry run's receipt first, nothing changed; then the real run.
    await page.fill('#forget-turns', '1');
    await page.click('#forget-dry');
    await expect
      .poll(() => page.locator('#forget .receipt').textContent())
      .toMatch(/^dry run: would remove \d+ item\(s\); turns 1.*turn:1/);
    expect((await api('POST', '/memory/retrieve', { id: 'turn:1' })).item?.id).toBe('turn:1');
    await page.click('#forget-run');
    await expect.poll(() => page.locator('#forget .receipt').textContent()).toMatch(/^removed \d+ item\(s\); turns 1/);
    expect((await api('POST', '/memory/retrieve', { id: 'turn:1' })).error?.message).toMatch(/not found/);
    expect(errors).toEqual([]);
    await page.close();
  });
  it("undoes a contradicted entry's last contradiction from a search result (req R-TIER-8)", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const { item } = await api('POST', '/memory/tiers/long_term', {
      text: 'The user rows a wooden canoe every Saturday',
      confidence: 0.7,
    });
    const id = String(item.id);
    // 0.7 − 0.3 = 0.4, below the long-term floor 0.5: one tier down.
    expect(
      (await api('POST', `/memory/items/${encodeURIComponent(id)}/contradict`, { evidence: 'turn:1' })).item,
    ).toMatchObject({ tier: 'short_term' });
    await page.goto(`${info.apiUrl}/console#user=${USER}&token=${encodeURIComponent(info.adminToken)}`);
    await page.fill('#q', 'wooden canoe Saturday');
    await page.click('#search-go');
    const result = page.locator(`#search .search-item[data-id="${id}"]`);
    await result.waitFor();
    await result.locator('button.undo').click();
    await expect
      .poll(() => page.locator('#status').textContent())
      .toContain(`undid the last contradiction of ${id}: long_term at 0.70`);
    expect((await api('POST', '/memory/retrieve', { id })).item).toMatchObject({ tier: 'long_term', confidence: 0.7 });
    expect(errors).toEqual([]);
    await page.close();
  });
});
