/** The diary's store. */
import type { AuditEntry } from '../tiers/memory-tiers.js';
import type { DiaryOverride, DiaryRecord } from './diary.js';

/** The diary's entries (lib/diary/diary.ts): every batch's decision, with the model's reflection for an event's batch. */
export interface DiaryStore {
  /** First write wins: a redelivered batch writes the same record, and a person's override stays. */
  put(record: DiaryRecord): Promise<void>;
  /** The user's entries, newest (latest turns) first, at most `limit`, after the page `after` ends (an entry id). */
  page(
    userId: string,
    options: { limit: number; after?: string | undefined; type?: DiaryRecord['type'] | undefined },
  ): Promise<{ entries: DiaryRecord[]; next?: string }>;
  byIds(userId: string, ids: readonly string[]): Promise<DiaryRecord[]>;
  /** A person's keep or drop (the latest wins), with its audit entry, together; null when the user has no such entry. */
  override(userId: string, id: string, override: DiaryOverride, audit: AuditEntry): Promise<DiaryRecord | null>;
}
