import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../domain/memory-paths.js';
import type { Edge, Entity, GraphLogEntry } from '../domain/relation-graph.js';
import type { GraphChange, GraphStore } from '../ports.js';
import { batchWriteAll, queryAll } from './dynamo-query.js';

/**
 * The relation graph in the single table, in the user's partition: `EDGE#{from}|{relation}|{to}`,
 * `ENTITY#{key}` and `GRAPHLOG#{at}#{action}#{subject}` items. A user's graph is read whole (two Queries):
 * neighbours and hygiene work on it in memory, which suits graphs of thousands of edges.
 */
export class DynamoGraphStore implements GraphStore {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async load(userId: string): Promise<{ edges: Edge[]; entities: Entity[] }> {
    const [edges, entities] = await Promise.all([this.query(userId, 'EDGE#'), this.query(userId, 'ENTITY#')]);
    return { edges: edges.map((i) => i.edge as Edge), entities: entities.map((i) => i.entity as Entity) };
  }

  async apply(userId: string, change: GraphChange): Promise<void> {
    const pk = keys.userPk(userId);
    const put = (sk: string, attrs: Record<string, unknown>) => ({ PutRequest: { Item: { pk, sk, userId, ...attrs } } });
    const del = (sk: string) => ({ DeleteRequest: { Key: { pk, sk } } });
    // The log first: a write that dies part-way leaves entries its rerun writes again (same
    // keys), never a change without its entry.
    await batchWriteAll(this.ddb, this.tableName, [
      ...(change.log ?? []).map((entry) => put(keys.graphLogSk(entry), { kind: 'graph-log', entry })),
      ...(change.edges ?? []).map((edge) => put(keys.edgeSk(edge.id), { kind: 'graph-edge', edge })),
      ...(change.entities ?? []).map((entity) => put(keys.entitySk(entity.key), { kind: 'graph-entity', entity })),
      ...(change.removeEdges ?? []).map((id) => del(keys.edgeSk(id))),
      ...(change.removeEntities ?? []).map((key) => del(keys.entitySk(key))),
    ]);
  }

  async logAt(userId: string, at: string): Promise<GraphLogEntry[]> {
    const items = await this.query(userId, keys.graphLogAtPrefix(at));
    return items.map((i) => i.entry as GraphLogEntry);
  }

  async log(userId: string, limit: number): Promise<GraphLogEntry[]> {
    const res = await this.ddb.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': 'GRAPHLOG#' },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (res.Items ?? []).map((i) => i.entry as GraphLogEntry);
  }

  private query(userId: string, prefix: string) {
    return queryAll(this.ddb, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': prefix },
    });
  }
}
