/**
 * Fuzz every event schema, queue record path and memory API route with hostile input
 * (bench/fuzz-targets.ts), in process, and report cases and failures per target; then
 * (unless `--no-stack`) the prompt-injection attack on the local harness with the memory API
 * fuzzed over HTTP (bench/prompt-injection.ts, in its own process: one stack per process).
 *
 *   npx tsx bench/fuzz.ts [--cases N] [--quick] [--seed S] [--max-bytes B] [--api-cases N] [--no-stack]
 *
 * `--cases` is the total over the in-process targets (default 10000, `--quick` 1000),
 * shared by their weights; `--api-cases` the HTTP requests of the stack run (default 400,
 * `--quick` 100). The last stdout line is one JSON object:
 * `{"cases","failures","seed","ms","targets":{name:{cases,failures,outcomes,examples,ms}},"injection":{"inProcess":{…},"stack":{…}}}`
 * where `failures` counts failing in-process cases plus the stack run's failed checks.
 * Exit code 1 when anything failed.
 */
import { spawnSync } from 'node:child_process';
import { fuzzTargets, runTarget, type TargetReport } from './fuzz-targets.js';
import type { InjectionReport } from './prompt-injection.js';

export interface FuzzReport {
  cases: number;
  failures: number;
  seed: number;
  ms: number;
  targets: Record<string, TargetReport>;
  injection: {
    /** The in-process prompt-injection target (also in `targets`): the model obeys the attacker. */
    inProcess: TargetReport | null;
    /** The attack on the local harness, with the API fuzzed over HTTP (null with --no-stack). */
    stack: InjectionReport | null;
  };
}

/** bench/prompt-injection.ts in its own process; its last stdout line is its report. */
function runStackInjection(apiCases: number): InjectionReport {
  const tsx = new URL('../node_modules/.bin/tsx', import.meta.url).pathname;
  const res = spawnSync(tsx, [new URL('./prompt-injection.ts', import.meta.url).pathname, String(apiCases)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 30 * 60_000,
  });
  const last = res.stdout?.trim().split('\n').at(-1);
  if ((res.status !== 0 && res.status !== 1) || !last)
    throw new Error(`bench/prompt-injection.ts failed (exit ${res.status})`);
  return JSON.parse(last) as InjectionReport;
}

/** Share `total` cases over the targets by weight (each gets at least one; largest remainders round up, so at least `total` in all). */
export function allocate(weights: readonly number[], total: number): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const exact = weights.map((w) => (total * w) / sum);
  const shares = exact.map((x) => Math.max(1, Math.floor(x)));
  const short = total - shares.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0]);
  for (let k = 0; k < short; k++) {
    const i = order[k % order.length]?.[1] ?? 0;
    shares[i] = (shares[i] ?? 0) + 1;
  }
  return shares;
}

export async function runFuzz(options: {
  cases: number;
  seed: number;
  maxBytes?: number;
  apiCases?: number;
  log?: (line: string) => void;
}): Promise<FuzzReport> {
  const started = performance.now();
  const targets = await fuzzTargets(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {});
  const shares = allocate(
    targets.map((t) => t.weight),
    options.cases,
  );
  const report: FuzzReport = {
    cases: 0,
    failures: 0,
    seed: options.seed,
    ms: 0,
    targets: {},
    injection: { inProcess: null, stack: null },
  };
  for (const [i, target] of targets.entries()) {
    const r = await runTarget(target, shares[i] ?? 1, options.seed + i);
    report.targets[target.name] = r;
    report.cases += r.cases;
    report.failures += r.failures;
    if (target.name.startsWith('prompt injection')) report.injection.inProcess = r;
    options.log?.(`${target.name}: ${r.cases} cases, ${r.failures} failed, ${r.ms} ms`);
    for (const e of r.examples) options.log?.(`  ✗ ${e}`);
  }
  if (options.apiCases !== undefined) {
    const stack = runStackInjection(options.apiCases);
    report.injection.stack = stack;
    report.failures += stack.failures.length;
    options.log?.(
      `prompt injection (local harness): ${stack.attackerTurns} attacker turns, ${stack.modelCalls} model calls, ${stack.api.requests} API requests, ${stack.failures.length} failed checks, ${stack.ms} ms`,
    );
    for (const f of stack.failures.slice(0, 10)) options.log?.(`  ✗ ${f}`);
  }
  report.ms = Math.round(performance.now() - started);
  return report;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const quick = process.argv.includes('--quick');
  const cases = Number(arg('--cases') ?? (quick ? 1000 : 10_000));
  const seed = Number(arg('--seed') ?? 20_260_806);
  const maxBytes = arg('--max-bytes') !== undefined ? Number(arg('--max-bytes')) : quick ? 512 * 1024 : undefined;
  const apiCases = process.argv.includes('--no-stack') ? undefined : Number(arg('--api-cases') ?? (quick ? 100 : 400));
  if (!Number.isInteger(cases) || cases < 1) throw new Error('--cases takes a positive integer');
  const report = await runFuzz({
    cases,
    seed,
    ...(maxBytes !== undefined ? { maxBytes } : {}),
    ...(apiCases !== undefined ? { apiCases } : {}),
    log: (line) => console.error(line),
  });
  console.log(JSON.stringify(report));
  process.exit(report.failures > 0 ? 1 : 0);
}
