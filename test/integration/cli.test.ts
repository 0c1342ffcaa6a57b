/** The fixed CLI contract of `npm start`, run as a user runs it. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * `npm start` in a child process, awaited until it exits on its own: `--once` ends when every
 * queue has drained, however long a loaded machine makes that. No clock stops it.
 */
async function start(args: string[], cwd: string) {
  const child = spawn(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'infra/local/cli.ts'), ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [status] = (await once(child, 'close')) as [number | null];
  const lines = stdout.trim().split('\n');
  let last: Record<string, number> = {};
  try {
    last = JSON.parse(lines.at(-1) ?? 'null') as Record<string, number>;
  } catch {
    // not JSON: the status assertion below reports stderr
  }
  return { status, stdout, stderr, last };
}

/**
 * Vitest's limit for a test, only against a run that never exits (a hang): far above what a
 * replay takes on a loaded 2-core machine (the sample: ~40 s quiet, 60-100 s loaded).
 */
const HANG_LIMIT_MS = 600_000;

describe('npm start', () => {
  it(
    '--once replays the bundled sample and ends with the counts as JSON',
    async () => {
      const cwd = mkdtempSync(join(tmpdir(), 'rm-cli-'));
      const run = await start(['--once'], cwd);
      expect(run.status, run.stderr).toBe(0);
      for (const key of ['turns', 'duplicates', 'rejected', 'batches', 'staged', 'promoted', 'errors'])
        expect(run.last).toHaveProperty(key);
      expect(run.last.batches).toBeGreaterThanOrEqual(1);
      expect(run.last.staged).toBeGreaterThanOrEqual(1);
      // The sample spans a month of LoCoMo sessions: the simulated clock fires the schedules on the way.
      expect(run.last.nightly).toBeGreaterThanOrEqual(1);
      expect(run.last.weekly).toBeGreaterThanOrEqual(1);
      expect(run.last.summaries).toBeGreaterThanOrEqual(1);
      expect(run.stdout).toContain('drained.');
      expect(existsSync(join(cwd, '.local/stack.json'))).toBe(false);
    },
    HANG_LIMIT_MS,
  );

  it(
    '--once --replay FILE counts unique events, duplicates and malformed lines',
    async () => {
      const cwd = mkdtempSync(join(tmpdir(), 'rm-cli-'));
      const sample = readFileSync(join(ROOT, 'events/samples/conversation.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .slice(0, 12);
      const file = join(cwd, 'events.jsonl');
      writeFileSync(
        file,
        [...sample, ...sample, '{"broken json', '{"type":"turn.saved","version":2}', '[]'].join('\n'),
      );
      const run = await start(['--once', '--replay', file], cwd);
      expect(run.status, run.stderr).toBe(0);
      expect(run.last).toMatchObject({ turns: 12, duplicates: 12, rejected: 3, batches: 1, errors: 0 });
    },
    HANG_LIMIT_MS,
  );
});
