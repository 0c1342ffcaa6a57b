import { createHash } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../kernel/memory-paths.js';
import { canonical, type Edge, type Entity, type GraphLogEntry } from './relation-graph.js';
import type { GraphChange, GraphStore } from './graph.port.js';
import { batchGetAll, batchWriteAll, queryAll } from '../kernel/dynamo-query.adapter.js';
import type { StorageTable } from '../kernel/storage.adapter.js';

/**
 * The relation graph in the single table, in the user's partition: `EDGE#{from}|{relation}|{to}`,
 * `ENTITY#{key}` and `GRAPHLOG#{at}#*{digest}#{n}` items (hygiene log entries packed by time), and two adjacency indexes kept
 * with them: `EDGETO#{to}|{relation}|{from}` (an edge under its target) and `ALIAS#{into}|{key}`
 * (an entity merged into another, under the other). The nightly sweep and the writers read a
 * graph whole (two Queries); an entity's neighbours read only its neighbourhood.
 *
 * Graphs written before the adjacency indexes (2026-11-24) get them at their next nightly
 * sweep (`indexAdjacency`, once per user, marked by `GRAPHINDEX`).
 */
export class DynamoGraphStore implements GraphStore {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(storage: StorageTable) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
  }

  async load(userId: string): Promise<{ edges: Edge[]; entities: Entity[] }> {
    const [edges, entities] = await Promise.all([
      this.query(userId, keys.edgePrefix),
      this.query(userId, keys.entityPrefix),
    ]);
    return { edges: edges.map((i) => i.edge as Edge), entities: entities.map((i) => i.entity as Entity) };
  }

  async apply(userId: string, change: GraphChange): Promise<void> {
    const pk = keys.userPk(userId);
    const put = (sk: string, attrs: Record<string, unknown>) => ({
      PutRequest: { Item: { pk, sk, userId, ...attrs } },
    });
    const del = (sk: string) => ({ DeleteRequest: { Key: { pk, sk } } });
    // The log first: a write that dies part-way leaves entries its rerun writes again (same
    // keys), never a change without its entry.
    await batchWriteAll(this.ddb, this.tableName, [
      ...packedLog(change.log ?? []).map(({ sk, entries }) => put(sk, { kind: 'graph-log', entries })),
      ...(change.edges ?? []).map((edge) => put(keys.edgeSk(edge.id), { kind: 'graph-edge', edge })),
      ...(change.entities ?? []).map((entity) => put(keys.entitySk(entity.key), { kind: 'graph-entity', entity })),
      ...adjacency(change).map(({ sk, attrs }) => put(sk, attrs)),
      ...(change.removeEdges ?? []).flatMap((id) => [del(keys.edgeSk(id)), del(keys.edgeToSk(edgeEnds(id)))]),
      ...(change.removeEntities ?? []).map((key) => del(keys.entitySk(key))),
    ]);
  }

  /**
   * The neighbourhood by adjacency: the entity's merge chain, its aliases (a Query per alias
   * level), each member's edges out and in (two Queries each, then the incoming edges by key),
   * and the entities those edges name, each followed along its merges (BatchGetItems). Read
   * eventually consistent, as `load` is: a neighbour can lag its edge's write by a moment.
   */
  async neighbourhood(userId: string, key: string): Promise<{ edges: Edge[]; entities: Entity[] }> {
    const entities = await this.entitiesAlongMerges(userId, [key], new Map());
    const self = canonical(key, entities);
    const members = await this.aliasesOf(userId, self, entities);
    const [outgoing, incoming] = await Promise.all([
      Promise.all(members.map((m) => this.query(userId, keys.edgesFromPrefix(m)))),
      Promise.all(members.map((m) => this.query(userId, keys.edgesToPrefix(m)))),
    ]);
    const edges = new Map(outgoing.flat().map((i) => [(i.edge as Edge).id, i.edge as Edge]));
    const missing = [...new Set(incoming.flat().map((i) => String(i.edgeId)))].filter((id) => !edges.has(id));
    const pk = keys.userPk(userId);
    for (const i of await batchGetAll(
      this.ddb,
      this.tableName,
      missing.map((id) => ({ pk, sk: keys.edgeSk(id) })),
    ))
      edges.set((i.edge as Edge).id, i.edge as Edge);
    const ends = [...edges.values()].flatMap((e) => [e.from, e.to]);
    await this.entitiesAlongMerges(userId, ends, entities);
    return { edges: [...edges.values()], entities: [...entities.values()] };
  }

  async indexAdjacency(userId: string, graph: { edges: readonly Edge[]; entities: readonly Entity[] }): Promise<void> {
    const pk = keys.userPk(userId);
    const marker = await this.ddb.send(
      new GetCommand({ TableName: this.tableName, Key: { pk, sk: keys.graphIndexSk }, ConsistentRead: true }),
    );
    if (marker.Item) return;
    // Only the adjacency items (idempotent puts): the edges and entities are left as they are.
    await batchWriteAll(
      this.ddb,
      this.tableName,
      adjacency(graph).map(({ sk, attrs }) => ({ PutRequest: { Item: { pk, sk, userId, ...attrs } } })),
    );
    await this.ddb.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { pk, sk: keys.graphIndexSk, userId, kind: 'graph-index', version: 1 },
      }),
    );
  }

  /** These entities and those they were merged into, up to the end of each chain (at most 20 steps, as `canonical`). */
  private async entitiesAlongMerges(
    userId: string,
    start: readonly string[],
    known: Map<string, Entity>,
  ): Promise<Map<string, Entity>> {
    const pk = keys.userPk(userId);
    const tried = new Set(known.keys());
    let frontier = [...new Set(start)];
    for (let step = 0; step <= 20 && frontier.length > 0; step++) {
      const ask = frontier.filter((k) => !tried.has(k));
      for (const k of ask) tried.add(k);
      for (const i of await batchGetAll(
        this.ddb,
        this.tableName,
        ask.map((k) => ({ pk, sk: keys.entitySk(k) })),
      ))
        known.set((i.entity as Entity).key, i.entity as Entity);
      frontier = frontier.flatMap((k) => known.get(k)?.mergedInto ?? []).filter((k) => !tried.has(k));
    }
    return known;
  }

  /** The entity and every entity merged into it (directly or along a chain); an alias item a split left stale is skipped. */
  private async aliasesOf(userId: string, self: string, entities: Map<string, Entity>): Promise<string[]> {
    const members = [self];
    for (let level = [self], depth = 0; level.length > 0 && depth < 20; depth++) {
      const found = (
        await Promise.all(
          level.map(async (into) =>
            (await this.query(userId, keys.aliasesPrefix(into))).map((i) => ({ into, alias: String(i.alias) })),
          ),
        )
      ).flat();
      await this.entitiesAlongMerges(
        userId,
        found.map((f) => f.alias),
        entities,
      );
      level = found
        .filter((f) => entities.get(f.alias)?.mergedInto === f.into && !members.includes(f.alias))
        .map((f) => f.alias);
      members.push(...level);
    }
    return members;
  }

  async logAt(userId: string, at: string): Promise<GraphLogEntry[]> {
    return [...entriesOf(await this.query(userId, keys.graphLogAtPrefix(at)))].sort(byKey).map(([, e]) => e);
  }

  /** The newest `limit` entries, newest first: pages of items until `limit` entries, and the rest of the last time's packs. */
  async log(userId: string, limit: number): Promise<GraphLogEntry[]> {
    const found = new Map<string, GraphLogEntry>();
    let start: Record<string, unknown> | undefined;
    let last: string | undefined;
    do {
      const res = await this.ddb.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
          ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': keys.graphLogPrefix },
          ScanIndexForward: false,
          Limit: limit,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of res.Items ?? []) {
        const entries = entriesOf([item]);
        if (last !== undefined && entries[0]?.[1].at !== last) return newest(found, limit);
        for (const [k, e] of entries) found.set(k, e);
        if (last === undefined && found.size >= limit) last = entries[0]?.[1].at;
      }
      start = res.LastEvaluatedKey;
    } while (start);
    return newest(found, limit);
  }

  private query(userId: string, prefix: string) {
    return queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': prefix },
    });
  }
}

/** Entries a pack holds at most: a pack of LoCoMo's hygiene entries stays under 16 KB, far below the 400 KB item limit. */
const PACK_ENTRIES = 50;

/**
 * A change's log entries as items, one per time and up to PACK_ENTRIES entries
 * (`GRAPHLOG#{at}#*{digest}#{n}`), not one per entry (an entry of ~250 bytes would be
 * billed a whole 1 KB write unit:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html).
 * The key is a digest of the entries, so writing the same entries again (a redelivery, a
 * rerun) rewrites the same items; a second write of other entries at the same time (the
 * facts' preview, then their change) is another pack, and readers drop an entry two packs
 * hold (`entriesOf`, by the entry's own key).
 */
function packedLog(log: readonly GraphLogEntry[]): Array<{ sk: string; entries: GraphLogEntry[] }> {
  const byAt = new Map<string, Map<string, GraphLogEntry>>();
  for (const e of log) byAt.set(e.at, (byAt.get(e.at) ?? new Map()).set(keys.graphLogSk(e), e));
  return [...byAt].flatMap(([at, entries]) => {
    const sorted = [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, e]) => e);
    const digest = createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 16);
    return Array.from({ length: Math.ceil(sorted.length / PACK_ENTRIES) }, (_, n) => ({
      sk: keys.graphLogPackSk(at, digest, n),
      entries: sorted.slice(n * PACK_ENTRIES, (n + 1) * PACK_ENTRIES),
    }));
  });
}

/** The entries of log items (packs, and the single entries written before them), each once by its key. */
function entriesOf(items: ReadonlyArray<Record<string, unknown>>): Array<[string, GraphLogEntry]> {
  const out = new Map<string, GraphLogEntry>();
  for (const i of items)
    for (const e of (i.entries as GraphLogEntry[] | undefined) ?? [i.entry as GraphLogEntry])
      out.set(keys.graphLogSk(e), e);
  return [...out];
}

const byKey = ([a]: [string, GraphLogEntry], [b]: [string, GraphLogEntry]) => (a < b ? -1 : a > b ? 1 : 0);
const newest = (found: Map<string, GraphLogEntry>, limit: number) =>
  [...found]
    .sort(byKey)
    .reverse()
    .slice(0, limit)
    .map(([, e]) => e);

/** An edge's ends and relation from its id (`{from}|{relation}|{to}`: keys hold no `|`). */
function edgeEnds(id: string): { from: string; relation: string; to: string } {
  const [from = '', relation = '', to = ''] = id.split('|');
  return { from, relation, to };
}

/** The adjacency items of these edges and entities: each edge under its target, each merged entity under the one it joined. */
function adjacency(change: {
  edges?: readonly Edge[] | undefined;
  entities?: readonly Entity[] | undefined;
}): Array<{ sk: string; attrs: Record<string, unknown> }> {
  return [
    ...(change.edges ?? []).map((edge) => ({
      sk: keys.edgeToSk(edge),
      attrs: { kind: 'graph-edge-to', edgeId: edge.id },
    })),
    ...(change.entities ?? []).flatMap((entity) =>
      entity.mergedInto
        ? [{ sk: keys.aliasSk(entity.mergedInto, entity.key), attrs: { kind: 'graph-alias', alias: entity.key } }]
        : [],
    ),
  ];
}
