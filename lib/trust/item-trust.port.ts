/** The trust of derived items. */
import type { AuditEntry } from '../tiers/memory-tiers.js';
import type { ItemTrust } from './scope-trust.js';

/**
 * The trust of derived items (req R-SCOPE-2; lib/trust/scope-trust.ts ItemTrust): one small
 * record per item that an outcome moved, beside the item's own store.
 */
export interface ItemTrustStore {
  /** These items' trust records, by item id (consistent); an item no outcome moved is absent. */
  get(userId: string, ids: readonly string[]): Promise<Map<string, ItemTrust>>;
  /**
   * Write `next` if the record still counts `expected` outcomes (0: none yet), with its audit
   * entry and the item's search change mark, together or not at all; false when another
   * outcome came first (read again and decide again).
   */
  record(userId: string, itemId: string, expected: number, next: ItemTrust, audit: AuditEntry): Promise<boolean>;
}
