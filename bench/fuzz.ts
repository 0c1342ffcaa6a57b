/**
 * Fuzz every event schema, queue record path and memory API route with hostile input
 * (bench/fuzz-targets.ts), in process, and report cases and failures per target.
 *
 *   npx tsx bench/fuzz.ts [--cases N] [--quick] [--seed S] [--max-bytes B]
 *
 * `--cases` is the total over all targets (default 10000, `--quick` 1000), shared by
 * their weights. The last stdout line is one JSON object:
 * `{"cases","failures","seed","ms","targets":{name:{cases,failures,outcomes,examples,ms}},"injection":{…}}`.
 * Exit code 1 when any case failed.
 */
import { fuzzTargets, runTarget, type TargetReport } from './fuzz-targets.js';

export interface FuzzReport {
  cases: number;
  failures: number;
  seed: number;
  ms: number;
  targets: Record<string, TargetReport>;
  /** The in-process prompt-injection target again, on its own (the model obeys the attacker). */
  injection: TargetReport | null;
}

/** Share `total` cases over the targets by weight (each gets at least one). */
export function allocate(weights: readonly number[], total: number): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => Math.max(1, Math.round((total * w) / sum)));
}

export async function runFuzz(options: { cases: number; seed: number; maxBytes?: number; log?: (line: string) => void }): Promise<FuzzReport> {
  const started = performance.now();
  const targets = await fuzzTargets(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {});
  const shares = allocate(
    targets.map((t) => t.weight),
    options.cases,
  );
  const report: FuzzReport = { cases: 0, failures: 0, seed: options.seed, ms: 0, targets: {}, injection: null };
  for (const [i, target] of targets.entries()) {
    const r = await runTarget(target, shares[i] ?? 1, options.seed + i);
    report.targets[target.name] = r;
    report.cases += r.cases;
    report.failures += r.failures;
    if (target.name.startsWith('prompt injection')) report.injection = r;
    options.log?.(`${target.name}: ${r.cases} cases, ${r.failures} failed, ${r.ms} ms`);
    for (const e of r.examples) options.log?.(`  ✗ ${e}`);
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
  if (!Number.isInteger(cases) || cases < 1) throw new Error('--cases takes a positive integer');
  const report = await runFuzz({ cases, seed, ...(maxBytes !== undefined ? { maxBytes } : {}), log: (line) => console.error(line) });
  console.log(JSON.stringify(report));
  process.exit(report.failures > 0 ? 1 : 0);
}
