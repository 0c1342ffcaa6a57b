/** An in-memory relation graph for tests, with a recording variant. */
import { keys } from '../kernel/memory-paths.js';
import type { GraphChange, GraphStore } from './graph.port.js';
import type { WriteLog } from '../kernel/write-log.fake.js';
import type { Edge, Entity, GraphLogEntry } from './relation-graph.js';

/** A user's relation graph in memory, as the DynamoDB store keeps it. */
export class MemoryGraphStore implements GraphStore {
  readonly edges = new Map<string, Map<string, Edge>>();
  readonly entities = new Map<string, Map<string, Entity>>();
  readonly entries = new Map<string, GraphLogEntry[]>();
  private of<T>(m: Map<string, Map<string, T>>, userId: string): Map<string, T> {
    if (!m.has(userId)) m.set(userId, new Map());
    return m.get(userId)!;
  }
  async load(userId: string) {
    return {
      edges: structuredClone([...this.of(this.edges, userId).values()]),
      entities: structuredClone([...this.of(this.entities, userId).values()]),
    };
  }
  async apply(userId: string, change: GraphChange) {
    const edges = this.of(this.edges, userId);
    const entities = this.of(this.entities, userId);
    for (const e of change.edges ?? []) edges.set(e.id, structuredClone(e));
    for (const e of change.entities ?? []) entities.set(e.key, structuredClone(e));
    for (const id of change.removeEdges ?? []) edges.delete(id);
    for (const key of change.removeEntities ?? []) entities.delete(key);
    // Keyed as the DynamoDB store keys them: the same entry written again is one entry.
    const written = new Set((change.log ?? []).map((e) => keys.graphLogSk(e)));
    const kept = (this.entries.get(userId) ?? []).filter((e) => !written.has(keys.graphLogSk(e)));
    this.entries.set(userId, [...kept, ...(change.log ?? [])]);
  }
  async log(userId: string, limit: number) {
    return [...(this.entries.get(userId) ?? [])].reverse().slice(0, limit);
  }
  /** The whole graph: the domain's `neighbours` picks what touches the entity (the DynamoDB store reads only that). */
  async neighbourhood(userId: string) {
    return this.load(userId);
  }
  async indexAdjacency() {}
  async logAt(userId: string, at: string) {
    return (this.entries.get(userId) ?? []).filter((e) => e.at === at);
  }
}

const ddbKey = (userId: string, sk: string) => `${keys.ownerPk(userId)}|${sk}`;

export class RecordingGraphStore extends MemoryGraphStore {
  constructor(private readonly writes: WriteLog) {
    super();
  }
  override async apply(userId: string, change: GraphChange) {
    for (const e of change.edges ?? []) this.writes.addItem('graph', userId, ddbKey(userId, keys.edgeSk(e.id)), e);
    for (const e of change.entities ?? [])
      this.writes.addItem('graph', userId, ddbKey(userId, keys.entitySk(e.key)), e);
    for (const entry of change.log ?? [])
      this.writes.addItem('graph', userId, ddbKey(userId, keys.graphLogSk(entry)), entry);
    return super.apply(userId, change);
  }
}
