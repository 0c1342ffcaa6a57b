import * as z from 'zod';

/**
 * The signal accumulator's numbers (req R-SIG) in one typed place. A stage overrides
 * any of them with a JSON object (the `SIGNAL_CONFIG` setting); omitted fields keep
 * the seed's values.
 */
export const SignalConfigSchema = z.object({
  /** Turns since the last batch that fire a batch; at most MAX_UNASSIGNED_TURNS (500), the turns the state keeps waiting. */
  turnThreshold: z.number().int().min(1).max(500).default(10),
  /** Urgency strictly above this fires a batch. */
  urgencyThreshold: z.number().min(0).default(5.0),
  /** Most turns one batch reflects on. */
  maxBatchTurns: z.number().int().min(1).max(100).default(10),
  /** How many recent turn topics are kept for the repetition signal. */
  topicWindow: z.number().int().min(1).max(100).default(10),
  /** A topic is "repeated" when it occurs this many times in the window, this turn included. */
  topicRepeatCount: z.number().int().min(2).default(3),
  /** APPROVE with quality at or above this is a high-confidence research turn. */
  highConfidenceQuality: z.number().min(0).max(1).default(0.85),
  /** Planner routes that mean the agent reached a knowledge boundary. */
  boundaryRoutes: z.array(z.string()).default(['refresh', 'clarify']),
  /** A pending batch older than this may fire again (its job was lost or parked in the DLQ). */
  pendingBatchTimeoutMs: z
    .number()
    .int()
    .min(0)
    .default(30 * 60 * 1000),
  /**
   * A pending batch the reflector deferred to a batch inference job (lib/batch-inference/routine-batch.ts)
   * fires again only after this: its request waits for the nightly collection (up to a day) and the
   * job for Bedrock (up to its timeout, 24 hours by default). Fired again, it runs on demand.
   */
  deferredBatchTimeoutMs: z
    .number()
    .int()
    .min(0)
    .default(72 * 3600 * 1000),
  /**
   * Idle summary (req R-SUM-1): minutes without a message before a summary may be written (a
   * user's own setting overrides it). Past SQS's 15-minute delay the idle check reschedules itself.
   */
  idleMinutes: z.number().min(0).max(1440).default(5),
  /** How many times faster than real time the idle threshold runs out: 1 in AWS; the local harness sets its `--speed`. */
  timeScale: z.number().positive().default(1),
  /** Idle summary (req R-SUM-1): messages since the last summary needed for one. */
  idleMinMessages: z.number().int().min(1).default(5),
  /** Most recent turns a summary job covers. */
  summaryMaxTurns: z.number().int().min(1).max(200).default(50),
  /** Days of per-day message counts kept for the nightly selection (activity index). */
  activityDays: z.number().int().min(1).max(60).default(14),
  weights: z
    .object({
      topicRepeated: z.number().default(1.0),
      userCorrection: z.number().default(2.0),
      highConfidenceResearch: z.number().default(1.5),
      knowledgeBoundary: z.number().default(1.0),
      contradiction: z.number().default(2.5),
    })
    .prefault({}),
});
export type SignalConfig = z.infer<typeof SignalConfigSchema>;

export const defaultSignalConfig: SignalConfig = SignalConfigSchema.parse({});

/** A stage's override (JSON text, possibly empty) merged onto the seed's numbers. */
export function parseSignalConfig(json: string | undefined): SignalConfig {
  if (!json || json.trim() === '') return defaultSignalConfig;
  return SignalConfigSchema.parse(JSON.parse(json));
}
