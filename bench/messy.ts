/**
 * Real model answers (the bench's `messy` section): a LoCoMo conversation replayed through the
 * local harness, as `npm start -- --once --messy-model RATE` replays it, with the messy model
 * (infra/local/messy-model.ts) writing RATE of the structured answers as real models get them
 * wrong. Reported: how many answers were messed up, by kind, and how many batches aborted, with
 * why (only answers with no usable content should).
 *
 *   tsx bench/messy.ts [--replay FILE] [--rate 0.3] [--seed 1]
 *
 * Its last stdout line is the result as JSON.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { replayLinesFromFile } from '../infra/local/locomo.js';
import type { MessKind } from '../infra/local/messy-model.js';
import { startHarness } from '../infra/local/harness.js';
import { printReport } from './print-report.js';

export interface MessyReport {
  replay: string;
  rate: number;
  seed: number;
  turns: number;
  modelCalls: number;
  messyAnswers: number;
  messyKinds: Record<MessKind, number>;
  batches: number;
  batchesAborted: number;
  /** Aborted batches over batches, in percent (two decimals). */
  abortPercent: number;
  /** Why each aborted batch aborted (its batch log's error), counted. */
  abortReasons: Record<string, number>;
  /** Messages left in the dead-letter queues. */
  errors: number;
  seconds: number;
}

export async function benchMessy(file: string, rate: number, seed: number): Promise<MessyReport> {
  const { lines } = replayLinesFromFile(readFileSync(file, 'utf8'), basename(file));
  const started = performance.now();
  const stack = await startHarness({ stage: 'messybench', logLevel: 'SILENT', speed: 300, messyModel: { rate, seed } });
  try {
    await stack.replayLines(lines, { clock: true });
    await stack.waitUntilDrained({ timeoutMs: 60 * 60_000 });
    // Let the last day end as the CLI does: its nightly (and any weekly) run.
    await stack.advanceTo(new Date(stack.now().getTime() + 24 * 3_600_000));
    await stack.waitUntilDrained({ timeoutMs: 60 * 60_000 });
    const s = await stack.report();
    const aborted = (await stack.scanItems()).filter(
      (i) => String(i.sk).startsWith('BATCH#') && i.status === 'aborted',
    );
    const abortReasons: Record<string, number> = {};
    for (const b of aborted) {
      // The reason without the batch's own figures (token counts), so alike aborts count together.
      const reason = String(b.error ?? 'unknown').replace(/\d+/g, 'N');
      abortReasons[reason] = (abortReasons[reason] ?? 0) + 1;
    }
    return {
      replay: basename(file),
      rate,
      seed,
      turns: s.turns,
      modelCalls: s.modelCalls,
      messyAnswers: s.messyAnswers,
      messyKinds: s.messyKinds,
      batches: s.batches,
      batchesAborted: s.batchesAborted,
      abortPercent: s.batches > 0 ? Math.round((s.batchesAborted / s.batches) * 10_000) / 100 : 0,
      abortReasons,
      errors: s.errors,
      seconds: Math.round((performance.now() - started) / 1000),
    };
  } finally {
    await stack.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      replay: { type: 'string' },
      rate: { type: 'string', default: '0.3' },
      seed: { type: 'string', default: '1' },
    },
    strict: true,
  });
  if (!values.replay)
    throw new Error('--replay FILE: a LoCoMo conversation (.json) or a JSONL file of turn.saved events');
  printReport(benchMessy(values.replay, Number(values.rate), Number(values.seed)));
}
