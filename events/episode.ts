import * as z from 'zod';
import { utf8Bytes } from './common.js';

/** A capability the agent invoked, e.g. `web.search`, `calendar:create_event`. */
export const CapabilityNameSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._:/-]+$/, 'capability may only hold the characters A-Z a-z 0-9 . _ : / -');

/** One step the agent took (req R-EPI's `actions: [{capability, params, result, confidence}]`). */
export const EpisodeActionSchema = z.object({
  capability: CapabilityNameSchema,
  /** What it was called with (any JSON). */
  params: z.record(z.string().max(128), z.unknown()).optional(),
  /** What came back, in words. */
  result: z.string().max(4000).optional(),
  /** The agent's confidence in the step, 0..1. */
  confidence: z.number().min(0).max(1).optional(),
  /** Whether this step worked; when absent, the episode's outcome stands for it. */
  success: z.boolean().optional(),
});
export type EpisodeAction = z.infer<typeof EpisodeActionSchema>;

/** Most bytes an episode may hold (its JSON, UTF-8): it travels in the turn index item. */
export const MAX_EPISODE_BYTES = 64 * 1024;

/** Size of a value as JSON; infinite when it cannot be written (nested too deeply: hostile params). */
function jsonBytes(value: unknown): number {
  try {
    return utf8Bytes(JSON.stringify(value));
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * An execution episode (req R-EPI): goal → plan → actions → outcome. Optional and
 * additive on `turn.saved`: stored with the turn, searchable as content type `episode`,
 * linked to the reflection that reviews the turn, and counted into the user's capability
 * confidence.
 */
export const EpisodeSchema = z
  .object({
    goal: z.string().min(1).max(1000),
    /** The plan's steps, in order. */
    plan: z.array(z.string().min(1).max(1000)).max(50).optional(),
    actions: z.array(EpisodeActionSchema).max(100).default([]),
    outcome: z.object({
      success: z.boolean(),
      failureReason: z.string().max(2000).optional(),
      durationMs: z
        .number()
        .int()
        .min(0)
        .max(7 * 24 * 3_600_000)
        .optional(),
    }),
  })
  .refine(
    (e) => jsonBytes(e) <= MAX_EPISODE_BYTES,
    `an episode may hold at most ${MAX_EPISODE_BYTES} bytes (its JSON, UTF-8)`,
  );
export type Episode = z.infer<typeof EpisodeSchema>;
