/**
 * `npm start` — the whole pipeline on loopback, one command.
 *
 *   npm start                       start, replay the bundled sample, serve until Ctrl-C
 *   npm start -- --once             …and exit once every queue is drained
 *   npm start -- --replay FILE      replay a JSONL file of turn.saved events (or a LoCoMo conversation .json) instead
 *   npm start -- --verbose          handler logs at INFO (default WARN), metrics on
 *   npm start -- --speed N          local delays run N× faster (default 300: the 5-minute idle check fires after 1 s)
 *   npm start -- --api-port N       serve the memory API and review console on this port (default: a free one)
 *   npm start -- --state FILE       write the stack's endpoints and credentials there (default .local/stack.json)
 *   npm start -- --faults RATE      inject faults: RATE (0–1) of AWS and model calls fail, and of invocations die (fault-injection.ts)
 *   npm start -- --faults-sustained MINUTES
 *                                   sustained mode: every model call is throttled for MINUTES simulated minutes from the first one
 *   npm start -- --messy-model RATE write RATE (0–1) of the model's structured answers as real models get them wrong
 *                                   (code fences, prose, trailing commas, enum case, extra or missing fields, cut, empty;
 *                                   infra/local/messy-model.ts); seeded by --messy-seed N (default 1)
 *   npm start -- --dump FILE        once drained, write the canonical state of every user there (infra/local/state-dump.ts)
 *
 * With --once the last line printed is one JSON object with the run's counts; the exit
 * code is non-zero if any message was left in a dead-letter queue.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { replayLinesFromFile } from './locomo.js';
import { startHarness, type LocalHarness, type RunReport } from './harness.js';
import { dumpDigest } from './state-dump.js';

const SAMPLE = new URL('../../events/samples/conversation.jsonl', import.meta.url);
let STATE_FILE = resolve('.local/stack.json');

function writeState(stack: LocalHarness, extra: Record<string, unknown> = {}): void {
  mkdirSync(dirname(STATE_FILE), { recursive: true });
  writeFileSync(STATE_FILE, `${JSON.stringify({ ...stack.info, pid: process.pid, ...extra }, null, 2)}\n`);
}

function human(s: RunReport): string {
  return [
    `turns ${s.turns} (duplicates ${s.duplicates}, late ${s.late}, rejected ${s.rejected})`,
    `batches ${s.batches} (aborted ${s.batchesAborted}) · model calls ${s.modelCalls} · gate rejections ${s.gateRejections} · staged ${s.staged} · promoted ${s.promoted}`,
    `tier entries ${s.tierEntries} · nightly findings stored ${s.findings}`,
    `summaries written ${s.summaries} of ${s.summaryJobs} fired · sweeps fired ${s.sweepsFired} · sleep-time runs: nightly ${s.nightly}, weekly ${s.weekly}`,
    `errors left in dead-letter queues: ${s.errors}; handler errors retried: ${s.handlerErrors}`,
    ...(s.messyAnswers > 0
      ? [
          `messy model answers: ${s.messyAnswers} (${Object.entries(s.messyKinds)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')})`,
        ]
      : []),
    ...(Object.values(s.faults).some((n) => n > 0)
      ? [
          `faults injected: ${Object.entries(s.faults)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')}`,
        ]
      : []),
    `IAM: ${s.iamChecked} requests checked against the functions' synthesized policies, ${s.iamDenied} denied`,
  ].join('\n');
}

/** The first denied requests, each with its function, action and resource: what to grant (infra/permissions.ts) or stop doing. */
function denials(stack: LocalHarness): string {
  const list = stack.iam?.stats.denials ?? [];
  return list
    .slice(0, 10)
    .map(
      (d) =>
        `  denied: ${d.fn}${d.caller === 'event-source' ? ' (event source)' : ''} ${d.operation} — ${d.action} on ${d.resource}`,
    )
    .join('\n');
}

interface CliOptions {
  once: boolean;
  stage: string;
  verbose: boolean;
  speed: number;
  faultRate: number;
  faultSeed: number;
  /** Real milliseconds every model call is throttled for, from the first one (--faults-sustained, in simulated minutes). */
  modelThrottleMs: number;
  /** Share of structured answers the messy model writes wrong (--messy-model), and its seed. */
  messyRate: number;
  messySeed: number;
  apiPort?: number;
  dump?: string;
  /** The file to replay (the bundled sample when --replay is not given). */
  file: string | URL;
}

/** The command line, checked; --state also moves STATE_FILE. */
function parseOptions(): CliOptions {
  const { values } = parseArgs({
    options: {
      once: { type: 'boolean', default: false },
      replay: { type: 'string' },
      stage: { type: 'string', default: 'local' },
      verbose: { type: 'boolean', default: false },
      speed: { type: 'string', default: '300' },
      'api-port': { type: 'string' },
      state: { type: 'string' },
      dump: { type: 'string' },
      faults: { type: 'string' },
      'faults-sustained': { type: 'string' },
      'fault-seed': { type: 'string', default: '1' },
      'messy-model': { type: 'string' },
      'messy-seed': { type: 'string', default: '1' },
    },
    strict: true,
  });
  if (values.state) STATE_FILE = resolve(values.state);
  const speed = Number(values.speed);
  if (!Number.isFinite(speed) || speed <= 0) throw new Error(`--speed must be a positive number, not ${values.speed}`);
  const faultRate = values.faults === undefined ? 0 : Number(values.faults);
  if (!Number.isFinite(faultRate) || faultRate < 0 || faultRate > 1)
    throw new Error(`--faults must be a share between 0 and 1, not ${values.faults}`);
  const messyRate = values['messy-model'] === undefined ? 0 : Number(values['messy-model']);
  if (!Number.isFinite(messyRate) || messyRate < 0 || messyRate > 1)
    throw new Error(`--messy-model must be a share between 0 and 1, not ${values['messy-model']}`);
  const messySeed = Number(values['messy-seed']);
  if (!Number.isInteger(messySeed)) throw new Error(`--messy-seed must be an integer, not ${values['messy-seed']}`);
  const sustainedMinutes = values['faults-sustained'] === undefined ? 0 : Number(values['faults-sustained']);
  if (!Number.isFinite(sustainedMinutes) || sustainedMinutes < 0)
    throw new Error(`--faults-sustained must be a number of minutes, not ${values['faults-sustained']}`);
  return {
    once: values.once ?? false,
    stage: values.stage ?? 'local',
    verbose: values.verbose ?? false,
    speed,
    faultRate,
    faultSeed: Number(values['fault-seed']),
    // Simulated minutes: local delays run `speed` times faster than real time.
    modelThrottleMs: (sustainedMinutes * 60_000) / speed,
    messyRate,
    messySeed,
    ...(values['api-port'] ? { apiPort: Number(values['api-port']) } : {}),
    ...(values.dump ? { dump: values.dump } : {}),
    file: values.replay ? resolve(values.replay) : SAMPLE,
  };
}

async function main(): Promise<number> {
  const options = parseOptions();
  const { file } = options;
  const { lines, format } = replayLinesFromFile(
    readFileSync(file, 'utf8'),
    basename(typeof file === 'string' ? file : file.pathname),
  );

  console.log('starting the local harness (DynamoDB Local, fauxqs SQS+S3, Converse endpoint with the offline model)…');
  const stack = await startHarness({
    stage: options.stage,
    logLevel: options.verbose ? 'INFO' : 'WARN',
    metrics: options.verbose,
    speed: options.speed,
    ...(options.faultRate > 0 || options.modelThrottleMs > 0
      ? { faults: { rate: options.faultRate, seed: options.faultSeed, modelThrottleMs: options.modelThrottleMs } }
      : {}),
    ...(options.messyRate > 0 ? { messyModel: { rate: options.messyRate, seed: options.messySeed } } : {}),
    ...(options.apiPort !== undefined ? { apiPort: options.apiPort } : {}),
    onHandlerError: (source, error) =>
      console.error(`[${source}] handler error (the records go back to the queue): ${(error as Error).message}`),
  });
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    rmSync(STATE_FILE, { force: true });
    await stack.stop();
  };
  try {
    writeState(stack);
    console.log(`stack ready · state in ${STATE_FILE}`);
    console.log(
      `memory API ${stack.info.apiUrl}/v1 · OpenAPI ${stack.info.apiUrl}/openapi.json · review console ${stack.info.apiUrl}/console · MCP ${stack.info.apiUrl}/v1/mcp (admin token in ${STATE_FILE}; \`npm run token -- --user ID\` mints a user-scoped one)`,
    );
    const what =
      typeof file === 'string'
        ? `${file}${format === 'locomo' ? ' (LoCoMo, converted to turn.saved)' : ''}`
        : 'the bundled sample (events/samples/conversation.jsonl)';
    const summary = await replayAndDrain(stack, lines, what);
    await printDrained(stack, summary, options.dump);
    if (options.once) {
      await shutdown();
      console.log(JSON.stringify(summary));
      return summary.errors > 0 ? 1 : 0;
    }
    await serveUntilStopped(stack, options.speed);
    console.log('stopping…');
    await shutdown();
    return 0;
  } catch (error) {
    await shutdown();
    throw error;
  }
}

/** Replays the lines on the simulated clock, printing progress, then lets the last day end; the summary once drained. */
async function replayAndDrain(stack: LocalHarness, lines: string[], what: string): Promise<RunReport> {
  // The simulated clock follows the replay's timestamps, firing the schedules it passes.
  const replay = await stack.replayLines(lines, { clock: true });
  console.log(`replaying ${what}: ${replay.published} of ${replay.lines} lines published`);
  for (const r of replay.refused) console.log(`  line ${r.line} refused by SQS: ${r.reason}`);

  let lastProgress = '';
  await stack.waitUntilDrained({
    onTick: async () => {
      const s = await stack.report();
      const line = `  … turns ${s.turns} · duplicates ${s.duplicates} · rejected ${s.rejected} · batches ${s.batches} · staged ${s.staged}`;
      if (line !== lastProgress) console.log(line);
      lastProgress = line;
    },
  });
  // Let the last day end as it would have: its nightly (and any weekly) run.
  await stack.advanceTo(new Date(stack.now().getTime() + 24 * 3_600_000));
  await stack.waitUntilDrained();
  writeState(stack, { drained: true });
  return stack.report();
}

/** The drained stack's counts, IAM checks and denials; with --dump, every user's state written to that file. */
async function printDrained(stack: LocalHarness, summary: RunReport, dump: string | undefined): Promise<void> {
  console.log(`drained.\n${human(summary)}`);
  if (stack.iam)
    console.log(
      `  IAM checks by function: ${Object.entries(stack.iam.stats.byFunction)
        .map(([fn, n]) => `${fn} ${n}`)
        .join(', ')}`,
    );
  if (summary.iamDenied > 0) console.log(denials(stack));
  if (dump) {
    const dumps = await stack.dumpState();
    writeFileSync(resolve(dump), `${JSON.stringify(dumps, null, 1)}\n`);
    console.log(
      `state of ${dumps.length} user(s) written to ${dump}: ${dumps.map((d) => `${d.userId} ${dumpDigest(d)}`).join(', ')}`,
    );
  }
}

/** Runs the clock at `speed`× real time, printing the sweeps it fires, until SIGINT or SIGTERM. */
async function serveUntilStopped(stack: LocalHarness, speed: number): Promise<void> {
  console.log(
    `serving until stopped (Ctrl-C). Publish with the endpoints in .local/stack.json. The clock runs ${speed}× real time from ${stack.now().toISOString()}.`,
  );
  const ticker = setInterval(() => {
    void stack.advanceTo(new Date(stack.now().getTime() + speed * 1000)).then((done) => {
      for (const f of done) console.log(`  ${f.at}: ${f.sweep} sweep`);
    });
  }, 1000);
  await new Promise<void>((resolveSignal) => {
    process.once('SIGINT', () => resolveSignal());
    process.once('SIGTERM', () => resolveSignal());
  });
  clearInterval(ticker);
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof Error ? error.stack : error);
    process.exit(2);
  },
);
