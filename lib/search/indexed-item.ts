/**
 * What a search segment keeps of each memory item: as an object (IndexedItem), and column by
 * column (ItemColumns), which is how a segment stores its items.
 */
import { asksQuestion, type MemoryItem } from '../items/memory-item.js';

/** What a segment keeps of an item: enough to filter, rank and drop redundant hits, not to show it. */
export interface IndexedItem {
  id: string;
  kind: MemoryItem['kind'];
  userId: string;
  scope: MemoryItem['scope'];
  tier: MemoryItem['tier'];
  quality: number;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms after which the item is gone; null when it persists. */
  expiresAt: number | null;
  primaryTopic: string;
  contentTypes: string[];
  sessionId: string | null;
  confidence: number;
  sourceTurns: number[];
  /** A turn whose reply ends by asking something (asksQuestion): the session's next turn answers it. */
  asks: boolean;
}

export const indexedItem = (item: MemoryItem): IndexedItem => ({
  id: item.id,
  kind: item.kind,
  userId: item.userId,
  scope: item.scope,
  tier: item.tier,
  quality: item.quality,
  createdAt: Date.parse(item.createdAt),
  expiresAt: item.expiresAt === null ? null : Date.parse(item.expiresAt),
  primaryTopic: item.primaryTopic,
  contentTypes: item.contentTypes,
  sessionId: item.sessionId ?? null,
  confidence: item.confidence,
  asks: asksQuestion(item),
  sourceTurns: item.sourceTurns,
});

/** A string column stored as codes into its distinct values (kinds, topics, sessions repeat). */
export interface Coded {
  values: string[];
  codes: Int32Array;
}

/** The item metadata, column by column: loading 100,000 items makes no objects until asked. */
export interface ItemColumns {
  ids: string[];
  userId: Coded;
  kind: Coded;
  scope: Coded;
  tier: Coded;
  primaryTopic: Coded;
  /** The content types joined by \u0001. */
  contentTypes: Coded;
  /** '' for none. */
  sessionId: Coded;
  quality: Float64Array;
  confidence: Float64Array;
  createdAt: Float64Array;
  /** NaN for none. */
  expiresAt: Float64Array;
  sourceTurnOffsets: Int32Array;
  sourceTurns: Int32Array;
  /** 1 for an item that asks (IndexedItem.asks); all 0 in a segment written before the answer ranking existed. */
  asks: Uint8Array;
}

const code = (values: readonly string[]): Coded => {
  const dict = new Map<string, number>();
  const codes = Int32Array.from(values, (v) => {
    let c = dict.get(v);
    if (c === undefined) {
      c = dict.size;
      dict.set(v, c);
    }
    return c;
  });
  return { values: [...dict.keys()], codes };
};
export const decode = (c: Coded, doc: number): string => c.values[c.codes[doc] ?? 0] ?? '';

export function columnsOf(items: readonly IndexedItem[]): ItemColumns {
  const offsets = new Int32Array(items.length + 1);
  items.forEach((i, d) => {
    offsets[d + 1] = (offsets[d] ?? 0) + i.sourceTurns.length;
  });
  return {
    ids: items.map((i) => i.id),
    userId: code(items.map((i) => i.userId)),
    kind: code(items.map((i) => i.kind)),
    scope: code(items.map((i) => i.scope)),
    tier: code(items.map((i) => i.tier)),
    primaryTopic: code(items.map((i) => i.primaryTopic)),
    contentTypes: code(items.map((i) => i.contentTypes.join('\u0001'))),
    sessionId: code(items.map((i) => i.sessionId ?? '')),
    quality: Float64Array.from(items, (i) => i.quality),
    confidence: Float64Array.from(items, (i) => i.confidence),
    createdAt: Float64Array.from(items, (i) => i.createdAt),
    expiresAt: Float64Array.from(items, (i) => i.expiresAt ?? Number.NaN),
    sourceTurnOffsets: offsets,
    sourceTurns: Int32Array.from(items.flatMap((i) => i.sourceTurns)),
    asks: Uint8Array.from(items, (i) => (i.asks ? 1 : 0)),
  };
}
