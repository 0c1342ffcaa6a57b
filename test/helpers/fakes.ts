/** In-memory implementations of the ports, for unit tests of the use cases. */
import type { Tombstone } from '../../lib/domain/tombstone.js';
import { keys } from '../../lib/kernel/memory-paths.js';
import { defaultSignalConfig } from '../../lib/signals/signal-weights.js';
import type { SettingsChange, UserSettings } from '../../lib/domain/user-settings.js';
import type { ForgetCounts, ForgetLog, ForgetReceipt, UserSettingsStore, ErasureLog, ItemEraser } from '../../lib/ports.js';
import { RecordingLog, fixedClock } from '../../lib/kernel/runtime.fake.js';
import type { ScriptedModel } from '../../lib/model/language-model.fake.js';
import { MemorySignalStateStore, MemoryIdleScheduler } from '../../lib/signals/signal-state.fake.js';
import { MemoryTurnStore, MemoryClaimChecks, MemoryRejectedLog } from '../../lib/turns/turn.fake.js';
import { MemoryJobQueue } from '../../lib/jobs/job-queue.fake.js';
import { MemoryBatchLogStore } from '../../lib/batches/batch-log.fake.js';
import { MemoryCostLedger } from '../../lib/costs/cost-ledger.fake.js';
import { MemoryDiary } from '../../lib/diary/diary.fake.js';
import { MemoryKnowledgeStore } from '../../lib/knowledge/knowledge.fake.js';
import { MemoryGraphStore } from '../../lib/graph/graph.fake.js';
import { MemorySourceReliabilityStore } from '../../lib/sources/source-reliability.fake.js';
import { MemoryItems } from '../../lib/items/memory-item.fake.js';

export class MemoryForgetLog implements ForgetLog {
  readonly receipts: ForgetReceipt[] = [];
  async latest(userId: string) {
    return this.receipts.filter((r) => r.userId === userId).sort((a, b) => b.requestedAt.localeCompare(a.requestedAt))[0] ?? null;
  }
  async request(receipt: ForgetReceipt) {
    if (!this.receipts.some((r) => r.userId === receipt.userId && r.requestedAt === receipt.requestedAt)) this.receipts.push(structuredClone(receipt));
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

/** Every port of the reflector's use case in memory, sharing the ingest deps' turns, state, sources and graph. */
export function reflectionDeps(ingest: ReturnType<typeof ingestDeps>, model: ScriptedModel) {
  return {
    turns: ingest.turns,
    signalState: ingest.signalState,
    knowledge: new MemoryKnowledgeStore(),
    batchLogs: new MemoryBatchLogStore(),
    sources: ingest.sources,
    graph: ingest.graph,
    costs: new MemoryCostLedger(),
    diary: new MemoryDiary(),
    model,
    clock: fixedClock(),
    log: new RecordingLog(),
    settings: { temperature: 0.6, maxTokens: 1500, budgetTokens: 4000 },
  };
}

/** Every port of the ingest use case, in memory. */
export function ingestDeps() {
  return {
    turns: new MemoryTurnStore(),
    signalState: new MemorySignalStateStore(),
    jobs: new MemoryJobQueue(),
    idle: new MemoryIdleScheduler(),
    claims: new MemoryClaimChecks(),
    rejected: new MemoryRejectedLog(),
    sources: new MemorySourceReliabilityStore(),
    graph: new MemoryGraphStore(),
    settings: new MemorySettings(),
    items: new MemoryItems(),
    clock: fixedClock(),
    log: new RecordingLog(),
    config: defaultSignalConfig,
    redaction: { personalData: false },
    source: 'turn-queue',
    forgets: { latest: async () => null },
  };
}

export class MemorySettings implements UserSettingsStore {
  readonly byUser = new Map<string, UserSettings>();
  async get(userId: string) {
    return { ...(this.byUser.get(userId) ?? {}) };
  }
  async update(userId: string, change: SettingsChange) {
    const next: Record<string, unknown> = { ...(this.byUser.get(userId) ?? {}) };
    for (const [k, v] of Object.entries(change)) {
      if (v === null) delete next[k];
      else if (v !== undefined) next[k] = v;
    }
    this.byUser.set(userId, next as UserSettings);
    return { ...(next as UserSettings) };
  }
}

/** Tombstones and forgotten turns in memory (lib/adapters/dynamo-erasure-log.ts in AWS). */
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
    return new Map(keys.flatMap((k) => { const t = mine.get(k); return t ? [[k, structuredClone(t)] as const] : []; }));
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

/** Records what an item eraser was asked to delete (lib/adapters/item-eraser.ts in AWS). */
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
