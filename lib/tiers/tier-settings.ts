/**
 * The tier policy's numbers, one set per stage (infra/config/stages.ts `tiers`; seed 004:
 * "Policies are configurable per deployment (stricter for safety-critical systems)"). Each
 * function that applies the policy reads them from its TIER_POLICY variable (JSON of the
 * stage's overrides); a stage that sets none gets the defaults below, the seed's numbers
 * where it gives one (req R-TIER-1, R-TIER-6..8, R-TIER-11).
 */
import * as z from 'zod';
import { DECAY_AFTER_DAYS, HALF_LIFE_DAYS } from '../knowledge/confidence-decay.js';

const unit = z.number().min(0).max(1);
const days = z.number().positive().max(3650);

export const TierPolicySchema = z
  .object({
    /** Short-term → long-term above this confidence ("Belief confidence > 0.8"). */
    promotionConfidence: unit.default(0.8),
    /** …and seen in at least this many sessions ("Cross-session consistency"). */
    minSessions: z.number().int().min(1).max(50).default(2),
    /** Written again in another session: confidence += this ("confidence += 0.15"). */
    corroborationGain: unit.default(0.15),
    /** Contradicted: confidence -= this ("Contradicted … confidence -= 0.3"). */
    contradictionCost: unit.default(0.3),
    /**
     * Below its tier's floor after a contradiction, an entry moves one tier down. Long-term: 0.5,
     * the seed's "unverified hypotheses (confidence < 0.5)" that stay out of long-term; short-term:
     * 0.3, so one contradiction demotes an entry written at the default 0.5 to ephemeral.
     */
    floors: z
      .object({ short_term: unit.default(0.3), long_term: unit.default(0.5) })
      .strict()
      .prefault({}),
    /** "Any tier → Garbage: … confidence < 0.1". */
    garbageBelow: unit.default(0.1),
    /** At TTL expiration below this, "unverified/unsupported". */
    unsupportedBelow: unit.default(0.5),
    /** Decay: from this many days after the last sighting, halving every half-life. */
    decay: z
      .object({
        short_term: z
          .object({ afterDays: days.default(1), halfLifeDays: days.default(7) })
          .strict()
          .prefault({}),
        long_term: z
          .object({ afterDays: days.default(DECAY_AFTER_DAYS), halfLifeDays: days.default(HALF_LIFE_DAYS) })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    /** Default TTLs, seconds: ephemeral (if its session never closes) and short-term ("default 7d"). */
    ttlSeconds: z
      .object({
        ephemeral: z
          .number()
          .int()
          .min(60)
          .max(30 * 86_400)
          .default(3600),
        short_term: z
          .number()
          .int()
          .min(60)
          .max(30 * 86_400)
          .default(7 * 86_400),
      })
      .strict()
      .prefault({}),
    /** Session close: an ephemeral entry written in this many of the session's writes recurred ("observed multiple times in session"). */
    recurrenceMin: z.number().int().min(2).max(100).default(2),
  })
  .strict()
  .refine((p) => p.floors.long_term < p.promotionConfidence, {
    message: 'must be below promotionConfidence',
    path: ['floors', 'long_term'],
  });

export type TierPolicy = z.infer<typeof TierPolicySchema>;
export type TierPolicyOverrides = z.input<typeof TierPolicySchema>;

export const DEFAULT_TIER_POLICY: TierPolicy = TierPolicySchema.parse({});

/** The policy from a stage's overrides; an invalid one is an error naming the field (`where.field: why`). */
export function tierPolicyOf(overrides: unknown, where = 'tiers'): TierPolicy {
  const parsed = TierPolicySchema.safeParse(overrides ?? {});
  if (parsed.success) return parsed.data;
  const why = parsed.error.issues.map((i) => `${[where, ...i.path.map(String)].join('.')}: ${i.message}`).join('; ');
  throw new Error(`invalid tier policy: ${why}`);
}

/** The policy from a TIER_POLICY variable (JSON); unset or empty: the defaults. */
export function parseTierPolicy(json: string | undefined): TierPolicy {
  if (json === undefined || json.trim() === '') return DEFAULT_TIER_POLICY;
  return tierPolicyOf(JSON.parse(json), 'TIER_POLICY');
}
