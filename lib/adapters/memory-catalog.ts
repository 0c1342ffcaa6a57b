import { episodeItem, GLOBAL_USER, knowledgeItem, type MemoryItem, mergeAttributes, reflectionItem, stagedItem, turnItem } from '../domain/memory-item.js';
import type { MemoryCatalog } from '../ports.js';
import type { S3DynamoTurnStore } from './dynamo-turn-store.js';
import type { KnowledgeRepository } from './knowledge-repository.js';
import type { DynamoMemoryItemStore } from './memory-item-store.js';
import type { S3DynamoReflectionStore } from './reflection-store.js';

/**
 * The read model behind search and retrieve: every store's records of one user, plus the
 * GLOBAL scope, as MemoryItems. Reads the turn index, staged records, summaries and memory
 * items and agent.event episodes from DynamoDB (one Query each) and promoted Knowledge from its index snapshot in S3
 * (one GET) — no turn document is read.
 */
export class StoreMemoryCatalog implements MemoryCatalog {
  constructor(
    private readonly stores: {
      turns: S3DynamoTurnStore;
      knowledge: KnowledgeRepository;
      reflections: S3DynamoReflectionStore;
      items: DynamoMemoryItemStore;
      stagedExpiryDays: number;
    },
  ) {}

  async items(userId: string): Promise<MemoryItem[]> {
    const { turns, knowledge, reflections, items, stagedExpiryDays } = this.stores;
    const [index, episodes, staged, docs, summaries, own, global] = await Promise.all([
      turns.allTurnIndex(userId),
      turns.eventEpisodes(userId),
      knowledge.listStaged(userId),
      knowledge.loadKnowledge(userId),
      reflections.list(userId),
      items.list(userId),
      userId === GLOBAL_USER ? Promise.resolve([]) : items.list(GLOBAL_USER),
    ]);
    const byTurn = new Map(index.map((t) => [t.turnId, t.attributes]));
    const attrs = (sourceTurns: readonly number[]) => mergeAttributes(sourceTurns, (t) => byTurn.get(t));
    return [
      ...index.map(turnItem),
      ...episodes.map(episodeItem),
      // Promoted records live on as Knowledge documents; their staged record is history.
      ...staged.filter((r) => r.status !== 'promoted').map((r) => stagedItem(userId, r, stagedExpiryDays, attrs(r.sourceTurns))),
      ...docs.map((d) => knowledgeItem(userId, d, attrs(d.sourceTurns))),
      ...summaries.map((r) => reflectionItem(r, attrs(r.sourceTurns))),
      ...own.map((i) => ({ ...i, attributes: Object.keys(i.attributes).length > 0 ? i.attributes : attrs(i.sourceTurns) })),
      ...global,
    ];
  }
}
