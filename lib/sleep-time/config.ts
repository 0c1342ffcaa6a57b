import * as z from 'zod';

/** The numbers of sleep-time compute (req R-SLP, req R-PRO-3, req R-ARC-1), per stage in one typed place. */
export const SleepTimeConfigSchema = z.object({
  /** Nightly: how far back the selection and the reflection look. */
  nightlyLookbackHours: z
    .number()
    .min(1)
    .max(24 * 14)
    .default(24),
  /** Nightly: human messages a user needs in the look-back window to be reflected on. */
  nightlyMinMessages: z.number().int().min(1).default(5),
  /** Weekly: how far back, over summaries. */
  weeklyLookbackDays: z.number().int().min(1).max(31).default(7),
  /**
   * Weekly: days (UTC) with conversation (a completed batch or a context summary) the week
   * needs before the model is asked. A week whose conversation fell on one day has no
   * trajectory or drift across it, and that day's nightly run has already reflected on it:
   * the run is logged as skipped, with why, and makes no call. 1 asks for every
   * week with anything to read.
   */
  weeklyMinDays: z.number().int().min(1).max(7).default(2),
  /** Chunk size for large message sets (estimated tokens). */
  chunkTokens: z.number().int().min(500).default(3000),
  /**
   * Most chunks one nightly run reflects on (one model call each); a heavier day has the rest
   * left out, spread evenly (`pickChunks`), and logged (`truncated` in the run). The token
   * budget below may leave out more.
   */
  maxNightlyChunks: z.number().int().min(1).max(20).default(5),
  /**
   * Req R-SLP-13: ~10–30K tokens per agent per night. The most one nightly run may use, checked
   * before its calls: as many chunks as fit at their worst (`nightlyCallCeiling`: the request
   * as sent with the most known memories, the tool-use prompt, and maxTokens of answer). The
   * chunks past it are left out like those past maxNightlyChunks, and the run logs `budget`.
   */
  nightlyTokenBudget: z.number().int().min(1000).default(30_000),
  /**
   * Req R-SLP-13: a weekly run uses less than a nightly (~5–15K tokens). The most its one call
   * may use, counted before it (`weeklyCallCeiling`); the week's oldest summaries past it are
   * left out (`pickWeekWithinBudget`) and the run logs them (`weeklyLeftOut`).
   */
  weeklyTokenBudget: z.number().int().min(2000).default(15_000),
  /** Staged items older than this with promotion_count < 2 expire. */
  stagedExpiryDays: z.number().int().min(1).default(30),
  /** Turn originals move to a colder storage class after this many days. */
  turnArchiveDays: z.number().int().min(1).default(30),
  temperature: z.number().min(0).max(1).default(0.6),
  maxTokens: z.number().int().min(100).default(1500),
});
export type SleepTimeConfig = z.infer<typeof SleepTimeConfigSchema>;
export const defaultSleepTimeConfig: SleepTimeConfig = SleepTimeConfigSchema.parse({});

export function parseSleepTimeConfig(json: string | undefined): SleepTimeConfig {
  return json && json.trim() !== '' ? SleepTimeConfigSchema.parse(JSON.parse(json)) : defaultSleepTimeConfig;
}
