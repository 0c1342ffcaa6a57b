/** The fixed CLI contract of `npm start`, run as a user runs it. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;

function start(args: string[], cwd: string) {
  const res = spawnSync(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'infra/local/cli.ts'), ...args], { cwd, encoding: 'utf8', timeout: 180_000 });
  const lines = res.stdout.trim().split('\n');
  let last: Record<string, number> = {};
  try {
    last = JSON.parse(lines.at(-1) ?? 'null') as Record<string, number>;
  } catch {
    // not JSON: the status assertion below reports stderr
  }
  return { status: res.status, stdout: res.stdout, stderr: res.stderr, last };
}

/** A child process's run, with room on a loaded 2-core machine (its spawn is stopped at 180 s). */
const PROCESS_LIMIT_MS = 200_000;

describe('npm start', () => {
  it('--once replays the bundled sample and ends with the counts as JSON', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'rm-cli-'));
    const run = start(['--once'], cwd);
    expect(run.status, run.stderr).toBe(0);
    for (const key of ['turns', 'duplicates', 'rejected', 'batches', 'staged', 'promoted', 'errors']) expect(run.last).toHaveProperty(key);
    expect(run.last.batches).toBeGreaterThanOrEqual(1);
    expect(run.last.staged).toBeGreaterThanOrEqual(1);
    // The sample spans a month of LoCoMo sessions: the simulated clock fires the schedules on the way.
    expect(run.last.nightly).toBeGreaterThanOrEqual(1);
    expect(run.last.weekly).toBeGreaterThanOrEqual(1);
    expect(run.last.summaries).toBeGreaterThanOrEqual(1);
    expect(run.stdout).toContain('drained.');
    expect(existsSync(join(cwd, '.local/stack.json'))).toBe(false);
  }, PROCESS_LIMIT_MS);

  it('--once --replay FILE counts unique events, duplicates and malformed lines', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'rm-cli-'));
    const sample = readFileSync(join(ROOT, 'events/samples/conversation.jsonl'), 'utf8').trim().split('\n').slice(0, 12);
    const file = join(cwd, 'events.jsonl');
    writeFileSync(file, [...sample, ...sample, '{"broken json', '{"type":"turn.saved","version":2}', '[]'].join('\n'));
    const run = start(['--once', '--replay', file], cwd);
    expect(run.status, run.stderr).toBe(0);
    expect(run.last).toMatchObject({ turns: 12, duplicates: 12, rejected: 3, batches: 1, errors: 0 });
  }, PROCESS_LIMIT_MS);
});
