/** The relation graph's store. */
import type { Edge, Entity, GraphLogEntry } from './relation-graph.js';

/** A user's relation graph: edges, entities and the hygiene log (lib/graph/relation-graph.ts). */
export interface GraphStore {
  /** The user's whole graph (the nightly sweep's and the writers' read). */
  load(userId: string): Promise<{ edges: Edge[]; entities: Entity[] }>;
  /**
   * What an entity's neighbours need, read by adjacency (bounded by the entity's degree and
   * aliases, not by the graph): the entity's chain of merges, the entities merged into it,
   * every edge from or to any of them, and the entities those edges name with their merges.
   */
  neighbourhood(userId: string, key: string): Promise<{ edges: Edge[]; entities: Entity[] }>;
  /** Index a graph written before `neighbourhood`'s indexes existed (once per user; the nightly sweep calls it with the graph it loaded). */
  indexAdjacency(userId: string, graph: { edges: readonly Edge[]; entities: readonly Entity[] }): Promise<void>;
  /** Write these edges and entities (whole items), remove those, append the log entries. */
  apply(userId: string, change: GraphChange): Promise<void>;
  /** The hygiene log, newest first. */
  log(userId: string, limit: number): Promise<GraphLogEntry[]>;
  /** The entries logged at exactly `at` (a sweep's time): what that sweep did, on whichever delivery. */
  logAt(userId: string, at: string): Promise<GraphLogEntry[]>;
}

export interface GraphChange {
  edges?: readonly Edge[];
  entities?: readonly Entity[];
  removeEdges?: readonly string[];
  removeEntities?: readonly string[];
  log?: readonly GraphLogEntry[];
}
