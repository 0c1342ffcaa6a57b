/** Memory items written through the API, and the audit trail of what was done to any item. */
import type { MemoryItem } from './memory-item.js';
import type { AuditEntry } from '../tiers/memory-tiers.js';

/** Memory items written through the API (tier entries, saved memories), per user or GLOBAL. */
export interface MemoryItemStore {
  get(userId: string, id: string): Promise<MemoryItem | null>;
  /** These items of one owner, by id (a consistent read); an id that names none is left out. */
  getMany(userId: string, ids: readonly string[]): Promise<MemoryItem[]>;
  /** First write wins: returns the stored item (the earlier one when this is a retry) and whether this call created it. */
  create(item: MemoryItem): Promise<{ item: MemoryItem; created: boolean }>;
  /** Replace the item if it is unchanged since `expectedUpdatedAt`; false when someone else changed it first. */
  replace(item: MemoryItem, expectedUpdatedAt: string): Promise<boolean>;
  list(userId: string): Promise<MemoryItem[]>;
  /** replace and its audit entry, together or not at all; false when the item changed since `expectedUpdatedAt`. */
  move(item: MemoryItem, expectedUpdatedAt: string, audit: AuditEntry): Promise<boolean>;
  /** Every owner's live items whose TTL runs out on `day` (YYYY-MM-DD, UTC). */
  expiringOn(day: string): Promise<MemoryItem[]>;
  /** The ids of the ephemeral entries written in a session (some may be gone). */
  sessionEphemera(userId: string, sessionId: string): Promise<string[]>;
}

/** Who did what to which item, when and why: promotions, demotions, deletions, reviews. */
export interface AuditTrail {
  append(entries: readonly AuditEntry[]): Promise<void>;
  /** Writes the entry unless one is already at its key (time, item, action): a retry's record of a change an earlier attempt made. */
  appendOnce(entry: AuditEntry): Promise<void>;
  /** Newest first. */
  list(userId: string, options: { itemId?: string | undefined; limit: number }): Promise<AuditEntry[]>;
  /** Drops the words edits kept (`previous`) from these items' entries, once the items are deleted; returns how many entries. */
  dropWords(userId: string, itemIds: readonly string[]): Promise<number>;
}
