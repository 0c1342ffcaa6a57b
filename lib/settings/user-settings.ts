/**
 * A user's own summary settings (req R-SUM-8's configuration): the
 * inactivity threshold before an idle summary, the summary's output cap and prompt, and
 * whether summaries are written at all. A field the user has not set follows the stage's
 * default (infra/config/stages.ts); a change sets fields, or clears them with null.
 */
import * as z from 'zod';
import type { SignalConfig } from '../signals/signal-weights.js';

/** Longest inactivity threshold: a day. Past SQS's 15-minute delay the idle check reschedules itself. */
export const MAX_IDLE_MINUTES = 1440;

const fields = {
  /** Write summaries (idle, session close, on demand) for this user. */
  enabled: z.boolean(),
  /** The summary's instruction (req R-SUM-2's system message). */
  prompt: z.string().trim().min(1).max(4000),
  /** The summary's output cap, in tokens. */
  maxTokens: z.number().int().min(100).max(8000),
  /** Minutes without a message before an idle summary. */
  idleMinutes: z.number().min(1).max(MAX_IDLE_MINUTES),
};

export const UserSettingsSchema = z.object(fields).partial();
export type UserSettings = z.infer<typeof UserSettingsSchema>;

/** A change: each field set to a value, or to null to follow the stage's default again (none: nothing changes). */
export const SettingsChangeSchema = z
  .object(
    Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.nullable().optional()])) as {
      [K in keyof typeof fields]: z.ZodOptional<z.ZodNullable<(typeof fields)[K]>>;
    },
  )
  .strict();
export type SettingsChange = z.infer<typeof SettingsChangeSchema>;

/** The stored settings as far as they are valid: a field that no longer validates is dropped (the default applies). */
export function readUserSettings(stored: Record<string, unknown> | undefined): UserSettings {
  const out: Record<string, unknown> = {};
  for (const [k, schema] of Object.entries(fields)) {
    const parsed = schema.safeParse(stored?.[k]);
    if (parsed.success) out[k] = parsed.data;
  }
  return out as UserSettings;
}

/** The signal config with the user's inactivity threshold in place of the stage's. */
export function withUserIdle(config: SignalConfig, settings: Pick<UserSettings, 'idleMinutes'>): SignalConfig {
  return settings.idleMinutes === undefined ? config : { ...config, idleMinutes: settings.idleMinutes };
}
