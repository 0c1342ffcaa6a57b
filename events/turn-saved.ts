import * as z from 'zod';
import {
  AttributesSchema,
  DomainSchema,
  SessionIdSchema,
  TimestampSchema,
  TurnIdSchema,
  UserIdSchema,
} from './common.js';
import { EpisodeSchema } from './episode.js';

export const ValidationOutcomeSchema = z.enum(['APPROVE', 'REVISE', 'RETRY', 'FAIL']);
export type ValidationOutcome = z.infer<typeof ValidationOutcomeSchema>;

/** The cheap signal inputs of req R-SIG that a publisher may attach to a turn. */
export const TurnSignalsSchema = z.object({
  /** Outcome of the agent's own validation of its answer. */
  validation: ValidationOutcomeSchema.optional(),
  /** The agent's quality score of its answer, 0..1. */
  quality: z.number().min(0).max(1).optional(),
  /** The route the planner took, e.g. `answer`, `refresh`, `clarify`. */
  route: z.string().max(64).optional(),
  /** True when the agent's freshness analyser found a contradiction with earlier findings. */
  contradiction: z.boolean().optional(),
});
export type TurnSignals = z.infer<typeof TurnSignalsSchema>;

/** How fetching a source went (req R-SRC): read, refused by the site, or failed otherwise. */
export const SourceOutcomeSchema = z.enum(['success', 'blocked', 'failed']);
export type SourceOutcome = z.infer<typeof SourceOutcomeSchema>;

/** One source the agent used for the turn (req R-SRC): aggregated per domain, for every user. */
export const SourceReportSchema = z.object({
  domain: DomainSchema,
  outcome: SourceOutcomeSchema,
  /** How well the content could be extracted, 0..1 (for a success). */
  extractionQuality: z.number().min(0).max(1).optional(),
});
export type SourceReport = z.infer<typeof SourceReportSchema>;

/** Most sources one turn may report. */
export const MAX_SOURCES_PER_TURN = 20;

/**
 * `turn.saved` v1 — published by an agent after every turn.
 * The field names are a fixed contract: publishers and tools outside this repository use them.
 *
 * @example
 * {"type":"turn.saved","version":1,"userId":"u-42","sessionId":"s-1","turnId":7,
 *  "timestamp":"2026-02-06T14:30:00Z","query":"Actually I meant the 40 gallon tank",
 *  "response":"Got it, the 40 gallon tank.","signals":{"validation":"APPROVE","quality":0.9}}
 */
export const TurnSavedSchema = z.object({
  type: z.literal('turn.saved'),
  version: z.literal(1),
  userId: UserIdSchema,
  sessionId: SessionIdSchema,
  turnId: TurnIdSchema,
  timestamp: TimestampSchema,
  /** The user's message. */
  query: z.string().min(1),
  /** The agent's reply. */
  response: z.string(),
  /** Gathered context and plan, markdown. */
  context: z.string().optional(),
  signals: TurnSignalsSchema.optional(),
  attributes: AttributesSchema.optional(),
  /** The sources the agent used (optional, additive): their outcomes feed per-domain reliability. */
  sources: z.array(SourceReportSchema).max(MAX_SOURCES_PER_TURN).optional(),
  /** What the agent set out to do in this turn and how it went (optional, additive; req R-EPI). */
  episode: EpisodeSchema.optional(),
});
export type TurnSaved = z.infer<typeof TurnSavedSchema>;
