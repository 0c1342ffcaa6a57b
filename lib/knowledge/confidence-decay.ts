/**
 * Confidence decay (req R-GRAPH: "confidence decay for
 * unverified old edges and facts"), shared by the relation graph's edges and the promoted
 * Knowledge facts. The numbers are ours — the seed names the operation, not the values:
 * something unverified for DECAY_AFTER_DAYS loses half its confidence every HALF_LIFE_DAYS
 * after that. The value is computed from the confidence it had when last verified and the
 * time since, never from the last sweep's result, so running a sweep twice changes nothing.
 * Below PRUNE_BELOW it is pruned softly and stays restorable for RECOVERY_DAYS.
 */
export const DECAY_AFTER_DAYS = 30;
export const HALF_LIFE_DAYS = 60;
export const PRUNE_BELOW = 0.2;
export const RECOVERY_DAYS = 30;
export const DAY_MS = 86_400_000;
/**
 * Decay is written when it has moved the stored confidence this much: often enough for
 * readers and the garbage threshold, at most about twenty writes in an entry's life (tier
 * entries, Knowledge facts; the graph's edges compute theirs when read).
 */
export const DECAY_WRITE_STEP = 0.05;

const round2 = (n: number) => Math.round(n * 100) / 100;

/** When decay starts and how fast it goes: idle days before it starts, days to halve after that. */
export interface DecayPolicy {
  afterDays: number;
  halfLifeDays: number;
}

/** The graph's edges, Knowledge facts and long-term memory items. */
export const SLOW_DECAY: DecayPolicy = { afterDays: DECAY_AFTER_DAYS, halfLifeDays: HALF_LIFE_DAYS };

/** What decay leaves at `now` of `base`, last verified at `verifiedAt` (ISO). */
export function decayed(base: number, verifiedAt: string, now: Date, policy: DecayPolicy = SLOW_DECAY): number {
  const idleDays = (now.getTime() - Date.parse(verifiedAt)) / DAY_MS - policy.afterDays;
  if (!(idleDays > 0)) return base;
  return round2(base * 0.5 ** (idleDays / policy.halfLifeDays));
}

/** Whether something pruned at `prunedAt` (ISO) is past its recovery window at `now`. */
export function pastRecovery(prunedAt: string, now: Date): boolean {
  return now.getTime() - Date.parse(prunedAt) > RECOVERY_DAYS * DAY_MS;
}
