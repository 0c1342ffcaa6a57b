/** In-memory summaries for tests, and the recording variant that logs each write under its storage key. */
import type { BatchLog } from '../batches/batch-log.js';
import { keys } from '../kernel/memory-paths.js';
import type { SummaryPair } from './summary.js';
import type { WriteLog } from '../kernel/write-log.fake.js';
import type { SummarySource, SummaryStore, WindowBounds } from './summary.port.js';

export class MemorySummaryStore implements SummaryStore {
  readonly pairs = new Map<string, SummaryPair>();
  async exists(userId: string, id: string) {
    return this.pairs.has(`${userId}/${id}`);
  }
  async write(pair: SummaryPair) {
    if (!this.pairs.has(`${pair.userId}/${pair.id}`)) this.pairs.set(`${pair.userId}/${pair.id}`, pair);
  }
  async softDelete(userId: string, id: string) {
    const p = this.pairs.get(`${userId}/${id}`);
    if (!p) return false;
    p.deleted = true;
    return true;
  }
  readonly resurrections = new Map<string, number>();
  async list(userId: string) {
    return [...this.pairs.values()]
      .filter((p) => p.userId === userId)
      .map((p) => ({
        userId,
        id: p.id,
        kind: p.kind,
        createdAt: p.createdAt,
        sourceTurns: p.sourceTurns,
        prompt: p.prompt,
        text: p.text,
        deleted: p.deleted,
        resurrections: this.resurrections.get(`${userId}/${p.id}`) ?? 0,
        ...(p.sessionId ? { sessionId: p.sessionId } : {}),
        ...(p.carried ? { carried: p.carried } : {}),
      }))
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }
  async newest(userId: string, options: { limit: number; includeDeleted: boolean }) {
    const bySk = (r: { id: string }) => keys.summarySk(r.id);
    return (await this.list(userId))
      .filter((r) => options.includeDeleted || !r.deleted)
      .sort((a, b) => bySk(b).localeCompare(bySk(a)))
      .slice(0, options.limit);
  }
  async edit(userId: string, id: string, edit: { text: string; by: string; at: string; reason?: string | undefined }) {
    const p = this.pairs.get(`${userId}/${id}`);
    if (!p || p.deleted) return null;
    p.text = edit.text;
    return (await this.list(userId)).find((r) => r.id === id) ?? null;
  }
  async countResurrections(userId: string, ids: readonly string[]) {
    for (const id of new Set(ids))
      if (this.pairs.has(`${userId}/${id}`))
        this.resurrections.set(`${userId}/${id}`, (this.resurrections.get(`${userId}/${id}`) ?? 0) + 1);
  }
  async byIds(userId: string, ids: readonly string[]) {
    const wanted = new Set(ids);
    return (await this.list(userId)).filter((r) => wanted.has(r.id));
  }
}

export class MemorySummarySource implements SummarySource {
  readonly logs: BatchLog[] = [];
  readonly texts: Array<{ userId: string; id: string; createdAt: string; text: string; sourceTurns?: number[] }> = [];
  async batchLogs(userId: string, { fromIso, toIso }: WindowBounds) {
    return this.logs.filter((l) => l.user_id === userId && l.timestamp >= fromIso && l.timestamp <= toIso);
  }
  async summaries(userId: string, { fromIso, toIso }: WindowBounds) {
    return this.texts.filter((t) => t.userId === userId && t.createdAt >= fromIso && t.createdAt <= toIso);
  }
}

const ddbKey = (userId: string, sk: string) => `${keys.ownerPk(userId)}|${sk}`;

export class RecordingSummaryStore extends MemorySummaryStore {
  constructor(private readonly log: WriteLog) {
    super();
  }
  override async write(pair: SummaryPair) {
    // The record only: the pair's document is rendered from it, not an S3 object.
    const { document: _rendered, ...record } = pair;
    this.log.addItem('summaries', pair.userId, ddbKey(pair.userId, keys.summarySk(pair.id)), record);
    return super.write(pair);
  }
  override async edit(
    userId: string,
    id: string,
    edit: { text: string; by: string; at: string; reason?: string | undefined },
  ) {
    this.log.add('summaries.edit', userId, ddbKey(userId, keys.summarySk(id)));
    return super.edit(userId, id, edit);
  }
  override async countResurrections(userId: string, ids: readonly string[]) {
    for (const id of ids) this.log.add('summaries.countResurrections', userId, ddbKey(userId, keys.summarySk(id)));
    return super.countResurrections(userId, ids);
  }
  override async softDelete(userId: string, id: string) {
    this.log.add('summaries.softDelete', userId, ddbKey(userId, keys.summarySk(id)));
    return super.softDelete(userId, id);
  }
}
