/**
 * Every item id an owner's stores hold, for a rebuild of its search index
 * (lib/use-cases/search-rebuild.ts): one Query of the owner's partition for the sort keys
 * (ProjectionExpression: billed on the items read all the same, "the projection expression
 * does not reduce the read capacity consumed":
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.html), and the
 * promoted Knowledge from the knowledge index (one snapshot GET). What each kind of record's
 * sort key says of its id is the catalog's mapping (lib/use-cases/memory-catalog.ts) read
 * backwards; a diary entry counts only when it is visible, as its store marks it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type DiaryRecord, diaryVisible } from '../domain/diary.js';
import { GLOBAL_USER } from '../domain/memory-item.js';
import { keys } from '../domain/memory-paths.js';
import type { KnowledgeStore, OwnerItems } from '../ports.js';
import { queryAll } from './dynamo-query.js';

/** The part of a turn-keyed sort key after its prefix and `{last turn}#`, if it has one. */
const afterTurn = (rest: string): string => rest.replace(/^\d{10}#/, '');

/** An item id from a record's sort key; null for the records that are not search items. */
function idOfSk(sk: string, record: Record<string, unknown>): string | null {
  if (sk.startsWith(keys.turnPrefix)) return `turn:${Number(sk.slice(keys.turnPrefix.length))}`;
  if (sk.startsWith(keys.eventEpisodePrefix)) return `episode:${sk.slice(keys.eventEpisodePrefix.length)}`;
  if (sk.startsWith(keys.stagedPrefix)) return `staged:${sk.slice(keys.stagedPrefix.length)}`;
  if (sk.startsWith(keys.summaryPrefix)) return `summary:${afterTurn(sk.slice(keys.summaryPrefix.length))}`;
  if (sk.startsWith(keys.memoryPrefix)) return sk.slice(keys.memoryPrefix.length);
  if (sk.startsWith(keys.diaryPrefix)) {
    const entry = record.entry as Pick<DiaryRecord, 'written' | 'override'> | undefined;
    return entry && diaryVisible(entry) ? `diary:${afterTurn(sk.slice(keys.diaryPrefix.length))}` : null;
  }
  return null;
}

export class DynamoOwnerItems implements OwnerItems {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly knowledge: Pick<KnowledgeStore, 'loadKnowledge'>,
  ) {}

  async itemIds(userId: string): Promise<string[]> {
    const owned = userId !== GLOBAL_USER;
    const [records, docs] = await Promise.all([
      queryAll(this.ddb, {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.ownerPk(userId) },
        ExpressionAttributeNames: { '#e': 'entry', '#w': 'written', '#o': 'override' },
        ProjectionExpression: 'sk, #e.#w, #e.#o',
        ConsistentRead: true,
      }),
      owned ? this.knowledge.loadKnowledge(userId) : Promise.resolve([]),
    ]);
    // GLOBAL holds only shared memory items (the catalog reads no other kind for it).
    const ids = records.flatMap((r) => {
      const id = idOfSk(String(r.sk), r);
      return id !== null && (owned || id.startsWith('mem:')) ? [id] : [];
    });
    return [...ids, ...docs.map((d) => `knowledge:${d.id}`)];
  }
}
