/**
 * The relation graph (req R-GRAPH-1's relationships as triples, req R-LLM-2's connections) and
 * its hygiene (req R-GRAPH, run by graph-hygiene.ts), per user, as adjacency items in the
 * single table. Pure: the store keeps what these functions return.
 *
 * Edges come from the reflector's connections (two Knowledge files the model linked) and the
 * nightly run's relationship findings (subject, relationship, object), each with confidence
 * and provenance; users (and agents) may add their own through the API. The numbers (ours —
 * the seed names the operations, not the values):
 * - a new edge takes its source's confidence (a staged connection's; a nightly finding's tag:
 *   FINDING_EDGE_CONFIDENCE); seeing it again raises it by REINFORCE (max
 *   MAX_CONFIDENCE) and makes it verified now;
 * - confidence decay (lib/knowledge/confidence-decay.ts, shared with Knowledge facts): an edge
 *   unverified for DECAY_AFTER_DAYS loses half its confidence every HALF_LIFE_DAYS after
 *   that (computed from its base and age, so running the sweep twice changes nothing);
 * - pruning is a soft delete: below PRUNE_BELOW an edge is marked pruned and stays
 *   restorable for RECOVERY_DAYS, after which it is removed;
 * - orphan cleanup: an entity with no edge left (active or restorable) for ORPHAN_DAYS goes;
 * - entity deduplication: labels are normalised (case, punctuation, a parenthetical, a
 *   leading article, a trailing plural s) into the entity key, so "America (band)" and
 *   "america" are one entity from the start; keys still apart but similar (edit distance
 *   ≤ 1 for keys of 5+ characters, or the same words in another order) are merged: the
 *   alias points at the entity with more edges. A merge only sets the alias — edges are
 *   untouched — so a split undoes it exactly. Both are logged.
 * - user-created edges and entities are never decayed, pruned, removed or merged by the
 *   sweep: a merge that would touch one is logged as a proposal for the user to confirm.
 */
import { decayed } from '../knowledge/confidence-decay.js';

/** A nightly relationship finding's confidence tag as an edge's confidence. */
export const FINDING_EDGE_CONFIDENCE = { HIGH: 0.85, MEDIUM: 0.7, LOW: 0.5 } as const;
export const REINFORCE = 0.05;
export const MAX_CONFIDENCE = 0.95;
export { DECAY_AFTER_DAYS, HALF_LIFE_DAYS, PRUNE_BELOW, RECOVERY_DAYS } from '../knowledge/confidence-decay.js';
export const ORPHAN_DAYS = 14;

export interface Provenance {
  source: 'batch' | 'nightly' | 'user';
  /** Batch or run id, or the API caller. */
  id: string;
  turns: number[];
  at: string;
}

export interface Edge {
  /** `{from}|{relation}|{to}`. */
  id: string;
  from: string;
  relation: string;
  to: string;
  /** Confidence when last verified; `confidence` is what decay left of it. */
  baseConfidence: number;
  confidence: number;
  verifiedAt: string;
  createdAt: string;
  status: 'active' | 'pruned';
  prunedAt?: string;
  userCreated: boolean;
  /** Newest last, at most MAX_PROVENANCE. */
  provenance: Provenance[];
  note?: string;
}

export interface Entity {
  key: string;
  label: string;
  createdAt: string;
  userCreated: boolean;
  /** Set by a merge: this entity is an alias of that one. */
  mergedInto?: string;
}

export interface GraphLogEntry {
  at: string;
  action:
    | 'merge'
    | 'split'
    | 'merge_proposed'
    | 'decay'
    | 'prune'
    | 'restore'
    | 'remove'
    | 'orphan_removed'
    | 'correct'
    | 'contradict'
    | 'revert';
  detail: string;
  edge?: string;
  entity?: string;
  into?: string;
  /** A Knowledge fact's path (relative to Knowledge/), for the facts' hygiene in the same log. */
  fact?: string;
}

/** What an observation of a relation carries. */
export interface EdgeObservation {
  from: string;
  relation: string;
  to: string;
  confidence: number;
  provenance: Provenance;
  note?: string;
  userCreated?: boolean;
}

const MAX_PROVENANCE = 10;
const round2 = (n: number) => Math.round(n * 100) / 100;

/** The entity key of a label: `America (band)`, `the Americas`, `Knowledge/Facts/america.md` → `america`. */
export function entityKey(label: string): string {
  const base =
    label.includes('/') || label.endsWith('.md')
      ? (label.split('/').pop() ?? label).replace(/\.md$/, '').replace(/--.*$/, '')
      : label;
  const words = base
    .toLowerCase()
    .replace(/\([^)]*\)/g, ' ')
    .replace(/[_\s]+/g, ' ')
    .replace(/[^\p{L}\p{N} ]+/gu, '')
    .trim()
    .split(' ')
    .filter(Boolean);
  if (words.length > 1 && ['the', 'a', 'an'].includes(words[0] ?? '')) words.shift();
  const last = words.length - 1;
  if (last >= 0 && (words[last]?.length ?? 0) > 3 && words[last]?.endsWith('s') && !words[last]?.endsWith('ss'))
    words[last] = words[last]!.slice(0, -1);
  return words.join('_').slice(0, 120);
}

export const relationKey = (relation: string): string =>
  relation
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 60) || 'related_to';

export const edgeId = (from: string, relation: string, to: string): string => `${from}|${relation}|${to}`;

/** Add an observation: a new edge, or the existing one seen again (restored if it was pruned). */
export function observeEdge(existing: Edge | undefined, o: EdgeObservation, now: string): Edge {
  const from = entityKey(o.from);
  const to = entityKey(o.to);
  const relation = relationKey(o.relation);
  if (!existing) {
    return {
      id: edgeId(from, relation, to),
      from,
      relation,
      to,
      baseConfidence: round2(o.confidence),
      confidence: round2(o.confidence),
      verifiedAt: now,
      createdAt: now,
      status: 'active',
      userCreated: o.userCreated ?? false,
      provenance: [o.provenance],
      ...(o.note ? { note: o.note } : {}),
    };
  }
  const seen = existing.provenance.some((p) => p.source === o.provenance.source && p.id === o.provenance.id);
  // The same batch or run seen again (a redelivery) changes nothing.
  if (seen) return existing;
  const base = round2(Math.min(MAX_CONFIDENCE, Math.max(existing.baseConfidence, o.confidence) + REINFORCE));
  const { prunedAt: _restored, ...rest } = existing;
  return {
    ...rest,
    baseConfidence: base,
    confidence: base,
    verifiedAt: now,
    status: 'active',
    userCreated: existing.userCreated || (o.userCreated ?? false),
    provenance: [...existing.provenance, o.provenance].slice(-MAX_PROVENANCE),
  };
}

/** The confidence decay left of an edge's base at `now`. */
export function decayedConfidence(
  edge: Pick<Edge, 'baseConfidence' | 'verifiedAt' | 'userCreated'>,
  now: Date,
): number {
  return edge.userCreated ? edge.baseConfidence : decayed(edge.baseConfidence, edge.verifiedAt, now);
}

/** Follow aliases to the entity an entity was merged into. */
export function canonical(key: string, entities: ReadonlyMap<string, Entity>): string {
  let current = key;
  for (let i = 0; i < 20; i++) {
    const next = entities.get(current)?.mergedInto;
    if (!next) return current;
    current = next;
  }
  return current;
}

/** Levenshtein distance, stopping early past `max`. */
function editDistanceWithin(a: string, b: string, max: number): boolean {
  if (Math.abs(a.length - b.length) > max) return false;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    if (Math.min(...row) > max) return false;
    prev = row;
  }
  return (prev[b.length] ?? max + 1) <= max;
}

/** Two entity keys that name the same thing: one edit apart (5+ characters), or the same words reordered. */
export function sameEntity(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.min(a.length, b.length) >= 5 && editDistanceWithin(a, b, 1)) return true;
  const wa = a.split('_').sort().join('_');
  const wb = b.split('_').sort().join('_');
  return a.includes('_') && wa === wb;
}

/** A pruned edge back in the graph, verified now (a person restored it). */
export function restoreEdge(edge: Edge, now: string): Edge {
  const { prunedAt: _gone, ...rest } = edge;
  const base = Math.max(edge.baseConfidence, 0.5);
  return { ...rest, status: 'active', baseConfidence: base, confidence: base, verifiedAt: now };
}

export interface Neighbour {
  entity: string;
  relation: string;
  direction: 'out' | 'in';
  confidence: number;
  status: Edge['status'];
  edge: string;
  provenance: Provenance[];
}

/** An entity's neighbours at `now`, aliases resolved both ways (best first, an active edge's confidence decayed to now); pruned edges only when asked. */
export function neighbours(
  entity: string,
  edges: readonly Edge[],
  entities: ReadonlyMap<string, Entity>,
  now: Date,
  includePruned = false,
): { entity: string; aliases: string[]; neighbours: Neighbour[] } {
  const self = canonical(entityKey(entity), entities);
  const aliases = [...entities.values()]
    .filter((e) => e.key !== self && canonical(e.key, entities) === self)
    .map((e) => e.key)
    .sort();
  const out: Neighbour[] = [];
  for (const e of edges) {
    if (e.status === 'pruned' && !includePruned) continue;
    const from = canonical(e.from, entities);
    const to = canonical(e.to, entities);
    const confidence = e.status === 'active' ? decayedConfidence(e, now) : e.confidence;
    if (from === self && to !== self)
      out.push({
        entity: to,
        relation: e.relation,
        direction: 'out',
        confidence,
        status: e.status,
        edge: e.id,
        provenance: e.provenance,
      });
    else if (to === self && from !== self)
      out.push({
        entity: from,
        relation: e.relation,
        direction: 'in',
        confidence,
        status: e.status,
        edge: e.id,
        provenance: e.provenance,
      });
  }
  return {
    entity: self,
    aliases,
    neighbours: out.sort((a, b) => b.confidence - a.confidence || a.entity.localeCompare(b.entity)),
  };
}
