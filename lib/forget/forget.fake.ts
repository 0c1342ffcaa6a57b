/** In-memory forget log and erasure log, and an item eraser that records what it was asked, for tests. */
import type { Tombstone } from './tombstone.js';
import type { ForgetCounts, ForgetLog, ForgetReceipt, ErasureLog, ItemEraser } from './forget.port.js';

export class MemoryForgetLog implements ForgetLog {
  readonly receipts: ForgetReceipt[] = [];
  async latest(userId: string) {
    return (
      this.receipts.filter((r) => r.userId === userId).sort((a, b) => b.requestedAt.localeCompare(a.requestedAt))[0] ??
      null
    );
  }
  async request(receipt: ForgetReceipt) {
    if (!this.receipts.some((r) => r.userId === receipt.userId && r.requestedAt === receipt.requestedAt))
      this.receipts.push(structuredClone(receipt));
  }
  async add(userId: string, requestedAt: string, counts: Partial<ForgetCounts>) {
    const r = this.receipts.find((x) => x.userId === userId && x.requestedAt === requestedAt);
    if (!r) throw new Error(`no receipt ${userId} ${requestedAt}`);
    for (const [k, v] of Object.entries(counts) as Array<[keyof ForgetCounts, number]>) r.counts[k] += v;
  }
  async complete(userId: string, requestedAt: string, completedAt: string) {
    const r = this.receipts.find((x) => x.userId === userId && x.requestedAt === requestedAt);
    if (r) Object.assign(r, { status: 'done', completedAt: r.completedAt ?? completedAt });
  }
}

/** Tombstones and forgotten turns in memory (lib/forget/dynamo-erasure-log.adapter.ts in AWS). */
export class MemoryErasureLog implements ErasureLog {
  readonly stones = new Map<string, Map<string, Tombstone>>();
  readonly forgotten = new Map<string, Set<number>>();
  async bury(userId: string, tombstones: readonly Tombstone[]): Promise<void> {
    const mine = this.stones.get(userId) ?? new Map<string, Tombstone>();
    for (const t of tombstones) mine.set(t.key, structuredClone(t));
    this.stones.set(userId, mine);
  }
  async buried(userId: string, keys: readonly string[]): Promise<Map<string, Tombstone>> {
    const mine = this.stones.get(userId) ?? new Map<string, Tombstone>();
    return new Map(
      keys.flatMap((k) => {
        const t = mine.get(k);
        return t ? [[k, structuredClone(t)] as const] : [];
      }),
    );
  }
  async forgetTurns(userId: string, turnIds: readonly number[]): Promise<void> {
    const mine = this.forgotten.get(userId) ?? new Set<number>();
    for (const t of turnIds) mine.add(t);
    this.forgotten.set(userId, mine);
  }
  async forgottenTurns(userId: string): Promise<Set<number>> {
    return new Set(this.forgotten.get(userId) ?? []);
  }
}

/** Records what an item eraser was asked to delete (lib/forget/item-eraser.adapter.ts in AWS). */
export class RecordingItemEraser implements ItemEraser {
  readonly records: Array<{ userId: string; sortKeys: string[]; changedIds: string[] }> = [];
  readonly objects: string[] = [];
  async sessionTurns(): Promise<number[]> {
    return [];
  }
  async deleteRecords(userId: string, sortKeys: readonly string[], changedIds: readonly string[]): Promise<void> {
    this.records.push({ userId, sortKeys: [...sortKeys], changedIds: [...changedIds] });
  }
  async deleteObjects(prefixes: readonly string[]): Promise<number> {
    this.objects.push(...prefixes);
    return 0;
  }
}
