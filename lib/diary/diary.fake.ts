/** An in-memory diary for tests. */
import type { DiaryOverride, DiaryRecord } from './diary.js';
import type { AuditEntry } from '../tiers/memory-tiers.js';
import { keys } from '../kernel/memory-paths.js';
import type { DiaryStore } from './diary.port.js';

/** The diary's records by user and id, first write wins (as DynamoDiaryStore), newest (latest turns) first. */
export class MemoryDiary implements DiaryStore {
  readonly records = new Map<string, DiaryRecord>();
  async put(record: DiaryRecord) {
    const key = `${record.userId}\u0000${record.id}`;
    if (!this.records.has(key)) this.records.set(key, structuredClone(record));
  }
  async page(
    userId: string,
    options: { limit: number; after?: string | undefined; type?: DiaryRecord['type'] | undefined },
  ) {
    const mine = [...this.records.values()]
      .filter((r) => r.userId === userId && (options.type === undefined || r.type === options.type))
      .sort((a, b) => keys.diarySk(b.id).localeCompare(keys.diarySk(a.id)));
    const from =
      options.after === undefined ? 0 : mine.findIndex((r) => keys.diarySk(r.id) < keys.diarySk(options.after ?? ''));
    const rest = from < 0 ? [] : mine.slice(from);
    const entries = rest.slice(0, options.limit).map((r) => structuredClone(r));
    return { entries, ...(rest.length > options.limit && entries.length > 0 ? { next: entries.at(-1)?.id } : {}) };
  }
  async byIds(userId: string, ids: readonly string[]) {
    return ids.flatMap((id) => {
      const r = this.records.get(`${userId}\u0000${id}`);
      return r ? [structuredClone(r)] : [];
    });
  }
  readonly audit: AuditEntry[] = [];
  async override(userId: string, id: string, override: DiaryOverride, audit: AuditEntry) {
    const r = this.records.get(`${userId}\u0000${id}`);
    if (!r) return null;
    r.override = structuredClone(override);
    this.audit.push(structuredClone(audit));
    return structuredClone(r);
  }
}
