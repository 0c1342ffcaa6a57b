/**
 * The fault-equivalence check: replay the same input on fresh local harnesses —
 * fault-free twice (determinism) and with injected faults — and compare the canonical
 * dumps of every user's state (state-dump.ts). Each replay is its own `npm start -- --once`
 * process, since a process holds one stack.
 *
 *   npm run faults -- [--replay FILE] [--rate 0.1] [--seed 1] [--speed 30] [--sustained 10]
 *
 * prints the report; its last line is JSON. Exit 1 when the states differ. A fourth replay
 * runs in sustained mode: every model call throttled for `--sustained` simulated minutes from
 * the first (0: skipped) — it must end with nothing in a DLQ and the fault-free state.
 *
 * Speed: the idle rule (req R-SUM-1) asks whether the user sent nothing for 5 minutes. A
 * record that failed comes back after its queue's visibility timeout (local: 2 s for
 * turns), so the simulated idle window must be longer than a retry, as in the cloud
 * (visibility 3 min < idle 5 min): the default speed here is 30 (idle 10 s), not 300. It is
 * not 60 either: replays run at once on two cores, and a replay stalled longer than the idle
 * window takes the stall for the user's silence and closes an idle summary early (a 5 s window
 * split one in a fresh-clone test run).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { RunReport } from './harness.js';
import { type DumpDifference, diffDumps, dumpDigest, type UserStateDump } from './state-dump.js';

/** The replays' speed: an idle window of 10 s (the module's comment says why). */
const DEFAULT_SPEED = 30;

export interface ReplayRun {
  label: string;
  summary: RunReport;
  dumps: UserStateDump[];
  seconds: number;
}

export interface ReplayOptions {
  label: string;
  /** A JSONL or LoCoMo file; the bundled sample when absent. */
  replay?: string;
  faults?: { rate: number; seed: number };
  /** Sustained mode: every model call throttled for this many simulated minutes. */
  sustainedMinutes?: number;
  speed?: number;
}

const CLI = new URL('./cli.ts', import.meta.url).pathname;
const TSX = new URL('../../node_modules/.bin/tsx', import.meta.url).pathname;

/** One `npm start -- --once --dump` in a child process. */
export async function replayInChild(options: ReplayOptions): Promise<ReplayRun> {
  const dir = mkdtempSync(join(tmpdir(), 'rm-equivalence-'));
  const dump = join(dir, 'state.json');
  const args = [
    CLI,
    '--once',
    '--speed',
    String(options.speed ?? DEFAULT_SPEED),
    '--dump',
    dump,
    '--state',
    join(dir, 'stack.json'),
  ];
  if (options.replay) args.push('--replay', options.replay);
  if (options.faults) args.push('--faults', String(options.faults.rate), '--fault-seed', String(options.faults.seed));
  if (options.sustainedMinutes) args.push('--faults-sustained', String(options.sustainedMinutes));
  const started = performance.now();
  try {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve, reject) => {
        const child = spawn(TSX, args, {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('error', reject);
        child.on('close', (c) => resolve({ code: c, stdout: out, stderr: err }));
      },
    );
    if (code !== 0)
      throw new Error(`replay "${options.label}" exited ${code}:\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`);
    const summary = JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null') as RunReport;
    const dumps = JSON.parse(readFileSync(dump, 'utf8')) as UserStateDump[];
    return { label: options.label, summary, dumps, seconds: (performance.now() - started) / 1000 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Comparison {
  users: number;
  /** Items and objects compared, per side. */
  records: number;
  differences: Array<DumpDifference & { userId: string }>;
  digests: { a: string[]; b: string[] };
}

export function compareRuns(a: ReplayRun, b: ReplayRun): Comparison {
  const users = [...new Set([...a.dumps.map((d) => d.userId), ...b.dumps.map((d) => d.userId)])].sort();
  const differences: Comparison['differences'] = [];
  for (const userId of users) {
    const da = a.dumps.find((d) => d.userId === userId) ?? { userId, items: {}, objects: {} };
    const db = b.dumps.find((d) => d.userId === userId) ?? { userId, items: {}, objects: {} };
    differences.push(...diffDumps(da, db).map((d) => ({ ...d, userId })));
  }
  return {
    users: users.length,
    records: a.dumps.reduce((n, d) => n + Object.keys(d.items).length + Object.keys(d.objects).length, 0),
    differences,
    digests: { a: a.dumps.map(dumpDigest), b: b.dumps.map(dumpDigest) },
  };
}

export interface EquivalenceReport {
  replay: string;
  rate: number;
  seed: number;
  speed: number;
  turns: number;
  records: number;
  /** Fault-free vs fault-free: determinism. */
  determinism: Differences;
  /** Fault-free vs faults. */
  equivalence: Differences;
  faults: RunReport['faults'];
  handlerErrors: number;
  /** Messages left in dead-letter queues after the faulty replay. */
  dlq: number;
  /** Fault-free vs sustained model throttling (null when not run). */
  sustained: (Differences & { minutes: number; throttled: number; dlq: number }) | null;
  seconds: { faultFree: number; faulty: number; sustained: number | null };
  /** Where every difference was written, when there were any (so a rare one is not lost). */
  differencesFile: string | null;
}

/** A comparison's differences: how many, by kind of record, and the first few. */
export interface Differences {
  differences: number;
  /** By kind of record: an item's sort-key prefix (`SUMMARY#`, `RUN#`…), an object's folder under the user's prefix (`Knowledge/Reflections/`…). */
  byKind: Record<string, number>;
  sample: Comparison['differences'];
}

/** The kind of record a difference is in (see Differences.byKind). */
export function recordKind(d: Pick<DumpDifference, 'where' | 'key'>): string {
  if (d.where === 'item') return `${d.key.split('|')[1]?.split('#')[0] ?? ''}#`;
  const path = d.key.split('/').slice(2, -1);
  return `${path.slice(0, path[0] === 'Knowledge' ? 2 : 1).join('/')}/`;
}

function differencesOf(c: Comparison): Differences {
  const byKind: Record<string, number> = {};
  for (const d of c.differences) byKind[recordKind(d)] = (byKind[recordKind(d)] ?? 0) + 1;
  return { differences: c.differences.length, byKind, sample: c.differences.slice(0, 5) };
}

/** Every difference of the three comparisons, in a file under .local/faults/ (null when there are none). */
function keepDifferences(replay: string, comparisons: Record<string, Comparison | null>): string | null {
  if (Object.values(comparisons).every((c) => c === null || c.differences.length === 0)) return null;
  const dir = resolve('.local/faults');
  mkdirSync(dir, { recursive: true });
  const file = join(
    dir,
    `${basename(replay).replace(/\.\w+$/, '')}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  );
  writeFileSync(
    file,
    `${JSON.stringify(Object.fromEntries(Object.entries(comparisons).map(([k, c]) => [k, c?.differences ?? null])), null, 1)}\n`,
  );
  return file;
}

/**
 * Three replays of one input (two fault-free, one with faults), and one with sustained model
 * throttling, all at once: a replay mostly waits (idle windows, redeliveries, polls; two of
 * them kept 2 cores about 20 % busy), and the faults bench ran twenty at once with the same
 * states.
 */
export async function checkEquivalence(options: {
  replay?: string;
  rate: number;
  seed: number;
  speed?: number;
  sustainedMinutes?: number;
}): Promise<EquivalenceReport> {
  const base = { ...(options.replay ? { replay: options.replay } : {}), speed: options.speed ?? DEFAULT_SPEED };
  const minutes = options.sustainedMinutes ?? 0;
  const [clean, faulty, again, throttled] = await Promise.all([
    replayInChild({ ...base, label: 'fault-free' }),
    replayInChild({ ...base, label: `faults ${options.rate}`, faults: { rate: options.rate, seed: options.seed } }),
    replayInChild({ ...base, label: 'fault-free again' }),
    minutes > 0
      ? replayInChild({ ...base, label: `model throttled ${minutes} min`, sustainedMinutes: minutes })
      : Promise.resolve(null),
  ]);
  const determinism = compareRuns(clean, again);
  const equivalence = compareRuns(clean, faulty);
  const sustained = throttled ? compareRuns(clean, throttled) : null;
  const replay = options.replay ?? 'events/samples/conversation.jsonl';
  return {
    replay,
    rate: options.rate,
    seed: options.seed,
    speed: base.speed,
    turns: clean.summary.turns,
    records: equivalence.records,
    determinism: differencesOf(determinism),
    equivalence: differencesOf(equivalence),
    faults: faulty.summary.faults,
    handlerErrors: faulty.summary.handlerErrors,
    dlq: faulty.summary.errors,
    sustained:
      throttled && sustained
        ? {
            minutes,
            ...differencesOf(sustained),
            throttled: throttled.summary.faults['model-throttling-sustained'],
            dlq: throttled.summary.errors,
          }
        : null,
    seconds: { faultFree: clean.seconds, faulty: faulty.seconds, sustained: throttled?.seconds ?? null },
    differencesFile: keepDifferences(replay, { determinism, equivalence, sustained }),
  };
}

/** The differences of a report, for a log: by kind of record, the first few, and the file with all of them. */
export function differenceLines(report: EquivalenceReport): string[] {
  const parts: Array<[string, Differences | null]> = [
    ['fault-free twice', report.determinism],
    ['faults', report.equivalence],
    ['model throttled', report.sustained],
  ];
  return [
    ...parts.flatMap(([label, d]) =>
      d && d.differences > 0
        ? [
            `${label}: ${d.differences} differences by kind ${JSON.stringify(d.byKind)}`,
            ...d.sample.map((x) => `${label}: ${JSON.stringify(x).slice(0, 400)}`),
          ]
        : [],
    ),
    ...(report.differencesFile ? [`every difference: ${report.differencesFile}`] : []),
  ];
}

async function main(): Promise<number> {
  const { parseArgs } = await import('node:util');
  const { values } = parseArgs({
    options: {
      replay: { type: 'string' },
      rate: { type: 'string', default: '0.1' },
      seed: { type: 'string', default: '1' },
      speed: { type: 'string', default: String(DEFAULT_SPEED) },
      sustained: { type: 'string', default: '10' },
    },
  });
  const report = await checkEquivalence({
    ...(values.replay ? { replay: values.replay } : {}),
    rate: Number(values.rate),
    seed: Number(values.seed),
    speed: Number(values.speed),
    sustainedMinutes: Number(values.sustained),
  });
  const f = report.faults;
  console.log(`replay ${report.replay}: ${report.turns} turns, ${report.records} records compared`);
  console.log(
    `faults injected (rate ${report.rate}, seed ${report.seed}): ${Object.entries(f)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}; handler errors retried ${report.handlerErrors}; left in DLQs ${report.dlq}`,
  );
  console.log(
    `determinism (fault-free twice): ${report.determinism.differences} differences; equivalence (fault-free vs faults): ${report.equivalence.differences} differences`,
  );
  const s = report.sustained;
  if (s)
    console.log(
      `sustained (model throttled ${s.minutes} simulated minutes, ${s.throttled} calls refused): ${s.differences} differences; left in DLQs ${s.dlq}`,
    );
  for (const line of differenceLines(report)) console.log(`  ${line}`);
  console.log(JSON.stringify(report));
  const sustainedOk = s === null || (s.differences === 0 && s.dlq === 0);
  return report.determinism.differences === 0 && report.equivalence.differences === 0 && report.dlq === 0 && sustainedOk
    ? 0
    : 1;
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  main().then(
    (code) => process.exit(code),
    (error) => {
      console.error(error instanceof Error ? error.stack : error);
      process.exit(2);
    },
  );
}
