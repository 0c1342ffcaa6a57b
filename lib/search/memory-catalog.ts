import { GLOBAL_USER, type MemoryItem, mergeAttributes } from '../items/memory-item.js';
import { diaryItem, episodeItem, knowledgeItem, summaryItem, stagedItem, turnItem } from '../items/source-items.js';
import { isDerivedId, withTrust } from '../trust/scope-trust.js';
import type { CatalogHint, MemoryCatalog, MemoryCatalogSources } from './search-index.port.js';

/**
 * The read model behind search and retrieve: items of one owner (a user, or GLOBAL) as
 * MemoryItems, by id — the turn index entries, agent.event episodes, staged records,
 * summaries, memory items and diary entries asked for from DynamoDB (a BatchGetItem per kind), promoted
 * Knowledge from its index snapshot in S3 (one GET, kept while its pointer stands), and the
 * source turns' attributes the derived items merge, and the derived items' trust records
 * (req R-SCOPE-2: their quality is their trust, unless the caller asks for their own). No turn document is read, and nothing
 * reads a user's whole history: a page of search results, or the changes a search index
 * folds in, is what it is asked for. Typed on the ports: the composition roots pass the
 * DynamoDB/S3 adapters, a test may pass fakes.
 */
export class StoreMemoryCatalog implements MemoryCatalog {
  constructor(private readonly stores: MemoryCatalogSources & { stagedExpiryDays: number }) {}

  async itemsById(userId: string, ids: readonly string[], hint: CatalogHint = {}): Promise<Map<string, MemoryItem>> {
    const { turns, knowledge, summaries, items, diary, trust, stagedExpiryDays } = this.stores;
    const of = (prefix: string) => ids.filter((id) => id.startsWith(prefix)).map((id) => id.slice(prefix.length));
    const owned = userId !== GLOBAL_USER;
    // The turns asked for, and those the caller says the items cite: one read, not two in a row.
    const asked = new Set(of('turn:').map(Number).filter(Number.isInteger));
    const turnIds = [...new Set([...asked, ...(hint.sourceTurns ?? [])])];
    const knowledgeIds = new Set(of('knowledge:'));
    // Read with the items, not after them: derived items only (a `mem:` item's trust is its quality).
    const trusted = owned && trust && hint.trust !== false ? ids.filter(isDerivedId) : [];
    const [index, episodes, staged, docs, summaryRecords, mems, entries, trusts] = await Promise.all([
      owned && turnIds.length > 0 ? turns.turnIndex(userId, turnIds) : Promise.resolve([]),
      owned && of('episode:').length > 0 ? turns.eventEpisodes(userId, of('episode:')) : Promise.resolve([]),
      owned && of('staged:').length > 0 ? knowledge.stagedRecords(userId, of('staged:')) : Promise.resolve([]),
      owned && knowledgeIds.size > 0 ? knowledge.loadKnowledge(userId) : Promise.resolve([]),
      owned && of('summary:').length > 0 ? summaries.byIds(userId, of('summary:')) : Promise.resolve([]),
      of('mem:').length > 0
        ? items.getMany(
            userId,
            ids.filter((id) => id.startsWith('mem:')),
          )
        : Promise.resolve([]),
      owned && of('diary:').length > 0 ? diary.byIds(userId, of('diary:')) : Promise.resolve([]),
      trust && trusted.length > 0 ? trust.get(userId, trusted) : Promise.resolve(new Map()),
    ]);
    const found = docs.filter((d) => knowledgeIds.has(d.id));
    const read = new Set(turnIds);
    const cited = [
      ...staged,
      ...found,
      ...summaryRecords,
      ...mems.filter((m) => Object.keys(m.attributes).length === 0),
    ]
      .flatMap((x) => x.sourceTurns)
      .filter((t) => !read.has(t));
    const byTurn = new Map(
      [...index, ...(owned && cited.length > 0 ? await turns.turnIndex(userId, cited) : [])].map((t) => [
        t.turnId,
        t.attributes,
      ]),
    );
    const attrs = (sourceTurns: readonly number[]) => mergeAttributes(sourceTurns, (t) => byTurn.get(t));
    const all = [
      ...index.filter((t) => asked.has(t.turnId)).map(turnItem),
      ...episodes.map(episodeItem),
      ...staged
        .filter((r) => r.status !== 'promoted')
        .map((r) => stagedItem(userId, r, stagedExpiryDays, attrs(r.sourceTurns))),
      ...found.map((d) => knowledgeItem(userId, d, attrs(d.sourceTurns))),
      ...summaryRecords.map((r) => summaryItem(r, attrs(r.sourceTurns))),
      ...mems.map((i) => ({
        ...i,
        attributes: Object.keys(i.attributes).length > 0 ? i.attributes : attrs(i.sourceTurns),
      })),
      ...entries.map(diaryItem),
    ];
    return new Map(all.map((i) => [i.id, isDerivedId(i.id) ? withTrust(i, trusts.get(i.id)) : i]));
  }
}
