/** Tier entries as a pipeline writes and reads them (req R-TIER-11), the same entries the API writes. */
import type { MemoryItem, Tier } from '../items/memory-item.js';
import type { NewTierEntry } from './memory-tiers.js';

export interface TierEntries {
  /**
   * Create the entry as `POST …/memory/{tier}` does: a deterministic id, a conditional first
   * write; written again from another session it is corroborated (and maybe promoted).
   */
  write(
    userId: string,
    tier: Tier,
    entry: NewTierEntry,
    actor: string,
  ): Promise<{ item: MemoryItem; created: boolean }>;
  /** The user's live entries of a tier, most recently changed first, at most `limit`. */
  recent(userId: string, tier: Tier, limit: number): Promise<MemoryItem[]>;
}
