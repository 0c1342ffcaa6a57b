/** In-memory memory items and audit trail for tests, with recording variants. */
import type { MemoryItem } from './memory-item.js';
import { keys } from '../kernel/memory-paths.js';
import type { AuditEntry } from '../tiers/memory-tiers.js';
import type { AuditTrail, MemoryItemStore } from './memory-item.port.js';
import type { WriteLog } from '../kernel/write-log.fake.js';

/** API-written memory items by owner and id, first write wins, moves on a condition (as DynamoMemoryItemStore). */
export class MemoryItems implements MemoryItemStore {
  readonly items = new Map<string, MemoryItem>();
  readonly audit: AuditEntry[] = [];
  private key = (userId: string, id: string) => `${userId}\u0000${id}`;
  async get(userId: string, id: string) {
    const item = this.items.get(this.key(userId, id));
    return item ? structuredClone(item) : null;
  }
  async getMany(userId: string, ids: readonly string[]) {
    return [...new Set(ids)].flatMap((id) => {
      const item = this.items.get(this.key(userId, id));
      return item ? [structuredClone(item)] : [];
    });
  }
  async create(item: MemoryItem) {
    const existing = this.items.get(this.key(item.userId, item.id));
    if (existing) return { item: structuredClone(existing), created: false };
    this.items.set(this.key(item.userId, item.id), structuredClone(item));
    return { item, created: true };
  }
  async replace(item: MemoryItem, expectedUpdatedAt: string) {
    const existing = this.items.get(this.key(item.userId, item.id));
    if (!existing || existing.updatedAt !== expectedUpdatedAt) return false;
    this.items.set(this.key(item.userId, item.id), structuredClone(item));
    return true;
  }
  async list(userId: string) {
    return [...this.items.values()].filter((i) => i.userId === userId).map((i) => structuredClone(i));
  }
  async move(item: MemoryItem, expectedUpdatedAt: string, audit: AuditEntry) {
    if (!(await this.replace(item, expectedUpdatedAt))) return false;
    this.audit.push(structuredClone(audit));
    return true;
  }
  async expiringOn(day: string) {
    return [...this.items.values()]
      .filter((i) => !i.deleted && i.expiresAt?.slice(0, 10) === day)
      .map((i) => structuredClone(i));
  }
  async sessionEphemera(userId: string, sessionId: string) {
    return [...this.items.values()]
      .filter((i) => i.userId === userId && i.tier === 'ephemeral' && i.sessionId === sessionId)
      .map((i) => i.id);
  }
}

const ddbKey = (userId: string, sk: string) => `${keys.ownerPk(userId)}|${sk}`;

/** API-written memory items (the in-memory store), each write in the log and each move's audit entry in the trail. */
export class RecordingMemoryItems extends MemoryItems {
  constructor(
    private readonly log: WriteLog,
    private readonly trail?: RecordingAudit,
  ) {
    super();
  }
  override async create(item: MemoryItem) {
    this.log.addItem('items.create', item.userId, ddbKey(item.userId, keys.memorySk(item.id)), { item });
    return super.create(item);
  }
  override async replace(item: MemoryItem, expectedUpdatedAt: string) {
    this.log.addItem('items.replace', item.userId, ddbKey(item.userId, keys.memorySk(item.id)), { item });
    return super.replace(item, expectedUpdatedAt);
  }
  override async move(item: MemoryItem, expectedUpdatedAt: string, audit: AuditEntry) {
    const moved = await super.move(item, expectedUpdatedAt, audit);
    if (moved) await this.trail?.append([audit]);
    return moved;
  }
}

export class RecordingAudit implements AuditTrail {
  readonly entries: AuditEntry[] = [];
  constructor(private readonly log: WriteLog) {}
  async append(entries: readonly AuditEntry[]) {
    for (const e of entries) {
      this.log.addItem('audit', e.userId, ddbKey(e.userId, keys.auditSk(e)), { entry: e });
      this.entries.push(structuredClone(e));
    }
  }
  async appendOnce(entry: AuditEntry) {
    const key = keys.auditSk(entry);
    if (!this.entries.some((e) => e.userId === entry.userId && keys.auditSk(e) === key)) await this.append([entry]);
  }
  async list(userId: string, options: { itemId?: string | undefined; limit: number }) {
    return this.entries
      .filter((e) => e.userId === userId && (options.itemId === undefined || e.itemId === options.itemId))
      .sort((a, b) => b.at.localeCompare(a.at))
      .slice(0, options.limit);
  }
  async dropWords(userId: string, itemIds: readonly string[]) {
    const mine = this.entries.filter(
      (e) => e.userId === userId && itemIds.includes(e.itemId) && e.previous !== undefined,
    );
    for (const e of mine) {
      delete e.previous;
      this.log.addItem('audit', e.userId, ddbKey(e.userId, keys.auditSk(e)), { entry: e });
    }
    return mine.length;
  }
}
