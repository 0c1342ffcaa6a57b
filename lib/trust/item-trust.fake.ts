/** In-memory item trust for tests, with a recording variant. */
import { keys } from '../kernel/memory-paths.js';
import type { AuditEntry } from '../tiers/memory-tiers.js';
import type { ItemTrust } from './scope-trust.js';
import type { WriteLog } from '../kernel/write-log.fake.js';
import type { RecordingAudit } from '../items/memory-item.fake.js';
import type { ItemTrustStore } from './item-trust.port.js';

/**
 * Derived items' trust records in memory, with the DynamoDB store's condition (the count of
 * outcomes read); `onRecord` runs after each write that lands (a test marks the search index there).
 */
export class MemoryItemTrust implements ItemTrustStore {
  readonly records = new Map<string, ItemTrust>();
  readonly audit: AuditEntry[] = [];
  onRecord?: (userId: string, itemId: string) => void;
  private key = (userId: string, id: string) => `${userId}\u0000${id}`;
  async get(userId: string, ids: readonly string[]) {
    return new Map(
      ids.flatMap((id) => {
        const t = this.records.get(this.key(userId, id));
        return t ? [[id, { ...t }] as const] : [];
      }),
    );
  }
  async record(userId: string, itemId: string, expected: number, next: ItemTrust, audit: AuditEntry) {
    if ((this.records.get(this.key(userId, itemId))?.outcomes ?? 0) !== expected) return false;
    this.records.set(this.key(userId, itemId), { ...next });
    this.audit.push(structuredClone(audit));
    this.onRecord?.(userId, itemId);
    return true;
  }
}

const ddbKey = (userId: string, sk: string) => `${keys.ownerPk(userId)}|${sk}`;

/** Derived items' trust records, each write recorded under the key the DynamoDB store writes (TRUST#{id} in the owner's partition). */
export class RecordingItemTrust extends MemoryItemTrust {
  constructor(
    private readonly log: WriteLog,
    private readonly trail?: RecordingAudit,
  ) {
    super();
  }
  override async record(userId: string, itemId: string, expected: number, next: ItemTrust, audit: AuditEntry) {
    this.log.addItem('trust.record', userId, ddbKey(userId, keys.trustSk(itemId)), { itemId, ...next });
    const written = await super.record(userId, itemId, expected, next, audit);
    if (written) await this.trail?.append([audit]);
    return written;
  }
}
