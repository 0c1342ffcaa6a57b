/** The sleep-time run log of req R-SLP-7 (its `reflection_log` table in the requirements): one record per sleep-time run. */
import type { WeeklyOutput } from './weekly.js';

export interface SleepTimeRun {
  runId: string;
  userId: string;
  kind: 'nightly' | 'weekly';
  status: 'completed' | 'failed';
  startedAt: string;
  windowFrom: string;
  windowTo: string;
  sessionsReviewed: number;
  /** Nightly: messages in the chunks reflected on (those of skipped chunks are in `truncated`). */
  messagesReviewed: number;
  /**
   * Weekly: summaries read (batch logs, nightly findings, context summaries). Nightly: the
   * day's context summaries read in place of the turns they summarised.
   */
  summariesReviewed: number;
  /** Nightly: the day's turns read through a summary rather than as said (they are in `messagesReviewed` too). */
  turnsSummarised?: number;
  /** Nightly: chunks reflected on (one model call each). */
  chunks: number;
  /** Nightly, when the day had more chunks than `maxNightlyChunks`: what was left out (its turns as first–last ranges). */
  truncated?: { chunksSkipped: number; messagesNotReviewed: number; turnRanges: Array<[number, number]> };
  /**
   * Nightly: the stage's token budget for the run (`nightlyTokenBudget`), the most its calls
   * could use (their ceilings, counted before them), and the chunks the budget left out beyond
   * the chunk cap. `tokens` is what they used.
   */
  budget?: { tokens: number; ceiling: number; chunksOverBudget: number };
  /**
   * Weekly: the summaries its token budget (`weeklyTokenBudget`, in `budget` with the call's
   * ceiling) left out, oldest first kept out: how many, by source, and the newest one's time.
   */
  weeklyLeftOut?: {
    summaries: number;
    bySource: Partial<Record<'batch' | 'nightly' | 'summary', number>>;
    newestAt: string;
  };
  /** Findings proposed, by category (after merging). */
  findingsByCategory: Record<string, number>;
  /** Findings not stored, with why (confidence gating, evidence rules, already known). */
  findingsRejected: Array<{ category: string; statement: string; reason: string }>;
  memoriesStored: number;
  /** What was stored: Knowledge paths and their statements. */
  stored: Array<{ path: string; statement: string }>;
  /** Tokens of the answers used. */
  tokens: { input: number; output: number };
  /** Calls cut at their output budget and asked again with a larger one: how many, and the tokens they used (in the cost too). */
  budgetRetries?: { calls: number; inputTokens: number; outputTokens: number };
  estimatedCostUsd: number | null;
  model: string | null;
  /** Why the model stopped, per call (`chunk-0`, …, `week`): Converse's stopReason. */
  stopReasons?: Record<string, string>;
  durationMs: number;
  errors: string[];
  /** Why the run asked the model nothing (weekly: its conversation fell on fewer days than `weeklyMinDays`). */
  skipped?: string;
  weekly?: WeeklyOutput;
  /** Nightly: relation-graph edges added or reinforced, and what the hygiene sweep did. */
  graph?: {
    edges: number;
    merged: number;
    mergesProposed: number;
    decayed: number;
    pruned: number;
    removed: number;
    orphansRemoved: number;
  };
  /** Nightly: Knowledge facts "already known" that this run saw again (verified, unless verified later already), and what the fact hygiene sweep did. */
  facts?: { verified: number; decayed: number; pruned: number; removed: number };
}
