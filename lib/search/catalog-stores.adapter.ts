/**
 * The six stores the read model (StoreMemoryCatalog) reads, over one table and bucket, and the
 * catalog over them: what the API and the reflector both build (each also writes through the stores).
 */
import { DynamoDiaryStore } from '../diary/dynamo-diary-store.adapter.js';
import { DynamoMemoryItemStore } from '../items/memory-item-store.adapter.js';
import type { Storage } from '../kernel/storage.adapter.js';
import { DynamoS3KnowledgeStore } from '../knowledge/knowledge-store.adapter.js';
import { DynamoS3SummaryStore } from '../summaries/summary-store.adapter.js';
import { DynamoItemTrustStore } from '../trust/dynamo-item-trust-store.adapter.js';
import { DynamoS3TurnStore } from '../turns/dynamo-turn-store.adapter.js';
import { StoreMemoryCatalog } from './memory-catalog.js';

export function catalogStores(storage: Storage, stagedExpiryDays: number) {
  const turns = new DynamoS3TurnStore(storage);
  const knowledge = new DynamoS3KnowledgeStore(storage);
  const summaries = new DynamoS3SummaryStore(storage);
  const items = new DynamoMemoryItemStore(storage);
  const diary = new DynamoDiaryStore(storage);
  // The derived items' trust (req R-SCOPE-2), folded into what search ranks; the API writes it.
  const trust = new DynamoItemTrustStore(storage);
  const catalog = new StoreMemoryCatalog({ turns, knowledge, summaries, items, diary, trust, stagedExpiryDays });
  return { turns, knowledge, summaries, items, diary, trust, catalog };
}
