/**
 * One immutable segment of a user's search index: the inverted index of a set of
 * memory items, and what ranking and filtering need of each item, without its text.
 *
 * Why not MiniSearch's serialised index, which search used before: measured on this machine
 * at 100,000 LoCoMo sentences, `MiniSearch.loadJSON` took 2.1 s and its JSON 13 MB, over the
 * cold-start goal of 1 s; its radix tree serves prefix and fuzzy search, which memory.search
 * never asks for. A segment is a term dictionary and flat typed arrays (postings per field,
 * the BM25 vectors of each item's text, field lengths), so loading one is a JSON parse of the
 * dictionary and the item metadata plus array views over one buffer.
 *
 * Tokens are exactly what the MiniSearch index used (knowledge-search.ts): `words` with
 * underscores as spaces; a term is a token of 2+ characters that is not a stopword, Porter
 * stemmed; a field's length is its count of distinct raw tokens (MiniSearch's rule). The
 * vectors for the similarity leave out all-digit terms, as DocumentIndex does.
 */
import { stemmer } from 'stemmer';
import { asksQuestion, type MemoryItem } from '../items/memory-item.js';
import { mergeEmbeddings, type SegmentEmbeddings } from './embedding-vectors.js';
import { counts } from '../knowledge/knowledge-search.js';
import { formsOf } from '../kernel/irregular-forms.js';
import { isStopword, words } from '../kernel/text.js';

/** The two fields BM25 scores, in MiniSearch's order (title first). */
export const FIELDS = ['title', 'text'] as const;
export type Field = (typeof FIELDS)[number];

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

const rawTokens = (text: string): string[] => words(text.replace(/_/g, ' '));
const termOf = (token: string): string | null => (token.length < 2 || isStopword(token) ? null : stemmer(token));

/**
 * The query's words as groups of terms, in order, repeats kept (MiniSearch scores a repeated
 * word twice): each word's own term first, then those of its other irregular forms
 * (irregular-forms.ts), which count as that word in the ranking.
 */
export const queryTermGroups = (query: string): string[][] =>
  rawTokens(query).flatMap((t) => {
    const own = termOf(t);
    return own === null ? [] : [[...new Set([own, ...formsOf(t).flatMap((f) => termOf(f) ?? [])])]];
  });

/** The terms of a text for its similarity vector: no all-digit terms (DocumentIndex's rule). */
export const vectorTerms = (text: string): string[] => rawTokens(text).flatMap((t) => (/^\d+$/.test(t) ? [] : (termOf(t) ?? [])));

interface Postings {
  /** offsets[t]..offsets[t+1] index `docs` and `tfs` for term t. */
  offsets: Int32Array;
  docs: Int32Array;
  tfs: Uint16Array;
}

/** A string column stored as codes into its distinct values (kinds, topics, sessions repeat). */
interface Coded {
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
const decode = (c: Coded, doc: number): string => c.values[c.codes[doc] ?? 0] ?? '';

function columnsOf(items: readonly IndexedItem[]): ItemColumns {
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

export class SearchSegment {
  /** Sum over the segment's items of each field's length, for the average BM25 needs. */
  readonly fieldTotals: Record<Field, number>;
  readonly vectorTotal: number;
  private readonly termIds: Map<string, number>;
  /** Items made so far, by ordinal (an array: a search looks up tens of thousands, and a Map's lookup cost a fifth of it). */
  private made: Array<IndexedItem | undefined> | undefined;
  private ordinals: Map<string, number> | undefined;
  private covering: Map<number, number[]> | undefined;

  constructor(
    readonly terms: readonly string[],
    readonly columns: ItemColumns,
    readonly postings: Record<Field, Postings>,
    readonly fieldLengths: Record<Field, Uint32Array>,
    /** The similarity vector of each item's text: offsets[d]..[d+1] index terms/tfs. */
    readonly vectors: { offsets: Int32Array; terms: Int32Array; tfs: Uint16Array; lengths: Uint32Array },
    /** The items' embedding vectors, when the stage embeds (embedding-vectors.ts). */
    readonly embeddings?: SegmentEmbeddings,
  ) {
    this.termIds = new Map(terms.map((t, i) => [t, i]));
    const sum = (a: Uint32Array) => a.reduce((s, n) => s + n, 0);
    this.fieldTotals = { title: sum(fieldLengths.title), text: sum(fieldLengths.text) };
    this.vectorTotal = sum(vectors.lengths);
  }

  get size(): number {
    return this.columns.ids.length;
  }

  /** Item `doc` of the segment (made on first use, then kept). */
  item(doc: number): IndexedItem {
    // Sized once, so the array keeps fast elements rather than turning into a dictionary as it fills out of order.
    this.made ??= new Array<IndexedItem | undefined>(this.size);
    let item = this.made[doc];
    if (item) return item;
    const c = this.columns;
    const expiresAt = c.expiresAt[doc] ?? Number.NaN;
    const types = decode(c.contentTypes, doc);
    const sessionId = decode(c.sessionId, doc);
    item = {
      id: c.ids[doc] ?? '',
      kind: decode(c.kind, doc) as IndexedItem['kind'],
      userId: decode(c.userId, doc),
      scope: decode(c.scope, doc) as IndexedItem['scope'],
      tier: decode(c.tier, doc) as IndexedItem['tier'],
      quality: c.quality[doc] ?? 0,
      createdAt: c.createdAt[doc] ?? 0,
      expiresAt: Number.isNaN(expiresAt) ? null : expiresAt,
      primaryTopic: decode(c.primaryTopic, doc),
      contentTypes: types === '' ? [] : types.split('\u0001'),
      sessionId: sessionId === '' ? null : sessionId,
      confidence: c.confidence[doc] ?? 0,
      sourceTurns: [...c.sourceTurns.subarray(c.sourceTurnOffsets[doc] ?? 0, c.sourceTurnOffsets[doc + 1] ?? 0)],
      asks: c.asks[doc] === 1,
    };
    this.made[doc] = item;
    return item;
  }

  /** The ordinal of the item with this id (a segment holds one owner's items, each once), made on first use. */
  docOf(id: string): number | undefined {
    this.ordinals ??= new Map(this.columns.ids.map((itemId, doc) => [itemId, doc]));
    return this.ordinals.get(id);
  }

  /** The ordinals of the segment's summaries that cover a turn (by its number), found on first use, then kept. */
  summariesCovering(turn: number): readonly number[] {
    if (!this.covering) {
      this.covering = new Map();
      const code = this.columns.kind.values.indexOf('summary');
      const c = this.columns;
      for (let doc = 0; code >= 0 && doc < this.size; doc++) {
        if (c.kind.codes[doc] !== code) continue;
        for (const t of c.sourceTurns.subarray(c.sourceTurnOffsets[doc] ?? 0, c.sourceTurnOffsets[doc + 1] ?? 0)) {
          const docs = this.covering.get(t);
          if (docs) docs.push(doc);
          else this.covering.set(t, [doc]);
        }
      }
    }
    return this.covering.get(turn) ?? [];
  }

  /** The owner and id of item `doc`, without making the item. */
  keyOf(doc: number): { userId: string; id: string } {
    return { userId: decode(this.columns.userId, doc), id: this.columns.ids[doc] ?? '' };
  }

  termId(term: string): number | undefined {
    return this.termIds.get(term);
  }

  /** Items holding `term` in `field`, with the term's frequency there. */
  postingsOf(field: Field, termId: number): { docs: Int32Array; tfs: Uint16Array } {
    const p = this.postings[field];
    const from = p.offsets[termId] ?? 0;
    const to = p.offsets[termId + 1] ?? from;
    return { docs: p.docs.subarray(from, to), tfs: p.tfs.subarray(from, to) };
  }

  /** How many items hold the term in their text (the similarity's document frequency). */
  textFrequency(termId: number): number {
    const p = this.postings.text;
    return (p.offsets[termId + 1] ?? 0) - (p.offsets[termId] ?? 0);
  }

  vectorOf(doc: number): { terms: Int32Array; tfs: Uint16Array; length: number } {
    const v = this.vectors;
    const from = v.offsets[doc] ?? 0;
    const to = v.offsets[doc + 1] ?? from;
    return { terms: v.terms.subarray(from, to), tfs: v.tfs.subarray(from, to), length: v.lengths[doc] ?? 0 };
  }

  /** A segment over these items, in this order (an item's position is its ordinal), with their embedding vectors if given. */
  static build(items: ReadonlyArray<{ item: IndexedItem; title: string; text: string }>, embeddings?: SegmentEmbeddings): SearchSegment {
    if (embeddings && embeddings.scales.length !== items.length) throw new Error(`${embeddings.scales.length} embeddings for ${items.length} items`);
    const dictionary = new Map<string, number>();
    const idOf = (term: string) => {
      let id = dictionary.get(term);
      if (id === undefined) {
        id = dictionary.size;
        dictionary.set(term, id);
      }
      return id;
    };
    const perField = { title: [] as Array<[number, number, number]>, text: [] as Array<[number, number, number]> };
    const lengths = { title: new Uint32Array(items.length), text: new Uint32Array(items.length) };
    const vectorRows: Array<Array<[number, number]>> = [];
    const vectorLengths = new Uint32Array(items.length);
    items.forEach((entry, doc) => {
      for (const field of FIELDS) {
        const tokens = rawTokens(entry[field]);
        lengths[field][doc] = new Set(tokens).size;
        for (const [term, tf] of counts(tokens.flatMap((t) => termOf(t) ?? []))) perField[field].push([idOf(term), doc, tf]);
      }
      const vterms = vectorTerms(entry.text);
      vectorLengths[doc] = vterms.length;
      vectorRows.push([...counts(vterms)].map(([term, tf]) => [idOf(term), tf]));
    });
    const termCount = dictionary.size;
    const postings = { title: toPostings(perField.title, termCount), text: toPostings(perField.text, termCount) };
    const offsets = new Int32Array(items.length + 1);
    vectorRows.forEach((row, doc) => {
      offsets[doc + 1] = (offsets[doc] ?? 0) + row.length;
    });
    const flat = vectorRows.flat();
    const vectors = { offsets, terms: Int32Array.from(flat, ([t]) => t), tfs: Uint16Array.from(flat, ([, f]) => Math.min(f, 65_535)), lengths: vectorLengths };
    return new SearchSegment([...dictionary.keys()], columnsOf(items.map((e) => e.item)), postings, lengths, vectors, embeddings);
  }
}

/**
 * One segment holding the items of `parts` that `keep` keeps, in order, without tokenising
 * anything again: dictionaries are united, ordinals renumbered, postings concatenated (parts in
 * order, so each term's docs stay ascending).
 */
export function mergeSegments(parts: ReadonlyArray<{ segment: SearchSegment; keep: (doc: number) => boolean }>): SearchSegment {
  const dictionary = new Map<string, number>();
  const termMaps = parts.map(({ segment }) =>
    Int32Array.from(segment.terms, (t) => {
      let id = dictionary.get(t);
      if (id === undefined) {
        id = dictionary.size;
        dictionary.set(t, id);
      }
      return id;
    }),
  );
  const ordinals = parts.map(({ segment }) => new Int32Array(segment.size).fill(-1));
  const kept: Array<{ part: number; doc: number }> = [];
  parts.forEach(({ segment, keep }, p) => {
    for (let d = 0; d < segment.size; d++) if (keep(d)) (ordinals[p] as Int32Array)[d] = kept.push({ part: p, doc: d }) - 1;
  });
  const rows = { title: [] as Array<[number, number, number]>, text: [] as Array<[number, number, number]> };
  for (const field of FIELDS) {
    parts.forEach(({ segment }, p) => {
      segment.terms.forEach((_, t) => {
        const { docs, tfs } = segment.postingsOf(field, t);
        for (let i = 0; i < docs.length; i++) {
          const doc = (ordinals[p] as Int32Array)[docs[i] ?? 0] ?? -1;
          if (doc >= 0) rows[field].push([(termMaps[p] as Int32Array)[t] ?? 0, doc, tfs[i] ?? 0]);
        }
      });
    });
    // toPostings wants rows doc by doc within a term: sort by new ordinal.
    rows[field].sort((a, b) => a[1] - b[1]);
  }
  const termCount = dictionary.size;
  const lengths = { title: new Uint32Array(kept.length), text: new Uint32Array(kept.length) };
  const vectorOffsets = new Int32Array(kept.length + 1);
  const vectorLengths = new Uint32Array(kept.length);
  const vterms: number[] = [];
  const vtfs: number[] = [];
  const items: IndexedItem[] = [];
  kept.forEach(({ part, doc }, n) => {
    const segment = (parts[part] as { segment: SearchSegment }).segment;
    lengths.title[n] = segment.fieldLengths.title[doc] ?? 0;
    lengths.text[n] = segment.fieldLengths.text[doc] ?? 0;
    const v = segment.vectorOf(doc);
    v.terms.forEach((t, i) => {
      vterms.push((termMaps[part] as Int32Array)[t] ?? 0);
      vtfs.push(v.tfs[i] ?? 0);
    });
    vectorOffsets[n + 1] = vterms.length;
    vectorLengths[n] = v.length;
    items.push(segment.item(doc));
  });
  return new SearchSegment(
    [...dictionary.keys()],
    columnsOf(items),
    { title: toPostings(rows.title, termCount), text: toPostings(rows.text, termCount) },
    lengths,
    { offsets: vectorOffsets, terms: Int32Array.from(vterms), tfs: Uint16Array.from(vtfs), lengths: vectorLengths },
    mergeEmbeddings(
      parts.map((p) => p.segment.embeddings),
      kept,
    ),
  );
}

/** Rows of (term, doc, tf) → postings grouped by term, docs ascending within a term. */
function toPostings(rows: Array<[number, number, number]>, termCount: number): Postings {
  const offsets = new Int32Array(termCount + 1);
  for (const [t] of rows) offsets[t + 1] = (offsets[t + 1] ?? 0) + 1;
  for (let t = 0; t < termCount; t++) offsets[t + 1] = (offsets[t + 1] ?? 0) + (offsets[t] ?? 0);
  const next = offsets.slice(0, termCount);
  const docs = new Int32Array(rows.length);
  const tfs = new Uint16Array(rows.length);
  // Rows come doc by doc, so docs stay ascending within each term.
  for (const [t, d, f] of rows) {
    const at = next[t] ?? 0;
    docs[at] = d;
    tfs[at] = Math.min(f, 65_535);
    next[t] = at + 1;
  }
  return { offsets, docs, tfs };
}

// ── Bytes: a JSON header (dictionaries, ids, array layout), then the arrays, 8-byte aligned ──

const MAGIC = 'RMSEG1';
type Typed = Int32Array | Uint32Array | Uint16Array | Uint8Array | Float64Array | Int8Array | Float32Array;
const TYPES = { i32: Int32Array, u32: Uint32Array, u16: Uint16Array, u8: Uint8Array, f64: Float64Array, i8: Int8Array, f32: Float32Array } as const;
type TypeName = keyof typeof TYPES;
const typeName = (a: Typed): TypeName => (Object.keys(TYPES) as TypeName[]).find((name) => a instanceof TYPES[name]) ?? 'f64';

const CODED = ['userId', 'kind', 'scope', 'tier', 'primaryTopic', 'contentTypes', 'sessionId'] as const;

function arraysOf(segment: SearchSegment): Record<string, Typed> {
  const c = segment.columns;
  return {
    titleOffsets: segment.postings.title.offsets,
    titleDocs: segment.postings.title.docs,
    titleTfs: segment.postings.title.tfs,
    textOffsets: segment.postings.text.offsets,
    textDocs: segment.postings.text.docs,
    textTfs: segment.postings.text.tfs,
    titleLengths: segment.fieldLengths.title,
    textLengths: segment.fieldLengths.text,
    vectorOffsets: segment.vectors.offsets,
    vectorTerms: segment.vectors.terms,
    vectorTfs: segment.vectors.tfs,
    vectorLengths: segment.vectors.lengths,
    quality: c.quality,
    confidence: c.confidence,
    createdAt: c.createdAt,
    expiresAt: c.expiresAt,
    sourceTurnOffsets: c.sourceTurnOffsets,
    sourceTurns: c.sourceTurns,
    asks: c.asks,
    ...Object.fromEntries(CODED.map((name) => [`${name}Codes`, c[name].codes])),
    // Present only in a segment with vectors; a segment without them (or written before) has neither.
    ...(segment.embeddings ? { embeddingCodes: segment.embeddings.codes, embeddingScales: segment.embeddings.scales } : {}),
  };
}

export function segmentToBytes(segment: SearchSegment): Uint8Array {
  const arrays = arraysOf(segment);
  const layout: Array<[string, TypeName, number, number]> = [];
  let offset = 0;
  for (const [name, a] of Object.entries(arrays)) {
    layout.push([name, typeName(a), offset, a.length]);
    offset += Math.ceil(a.byteLength / 8) * 8;
  }
  const dictionaries = Object.fromEntries(CODED.map((name) => [name, segment.columns[name].values]));
  const embedding = segment.embeddings ? { modelId: segment.embeddings.modelId, dimensions: segment.embeddings.dimensions } : undefined;
  const header = new TextEncoder().encode(JSON.stringify({ magic: MAGIC, terms: segment.terms, ids: segment.columns.ids, dictionaries, layout, embedding }));
  const base = Math.ceil((header.length + 4) / 8) * 8;
  const out = new Uint8Array(base + offset);
  new DataView(out.buffer).setUint32(0, header.length, true);
  out.set(header, 4);
  for (const [name, , at] of layout) {
    const a = arrays[name] as Typed;
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), base + at);
  }
  return out;
}

export function segmentFromBytes(bytes: Uint8Array): SearchSegment {
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + headerLength))) as {
    magic: string;
    terms: string[];
    ids: string[];
    dictionaries: Record<(typeof CODED)[number], string[]>;
    layout: Array<[string, TypeName, number, number]>;
    embedding?: { modelId: string; dimensions: number };
  };
  if (header.magic !== MAGIC) throw new Error(`not a search segment (magic ${JSON.stringify(header.magic)})`);
  const base = Math.ceil((headerLength + 4) / 8) * 8;
  // One aligned copy, so every array is a view of it (an S3 body's buffer may start anywhere).
  const body = new ArrayBuffer(bytes.byteLength - base);
  new Uint8Array(body).set(bytes.subarray(base));
  const a = Object.fromEntries(header.layout.map(([name, type, offset, length]) => [name, new TYPES[type](body, offset, length)])) as Record<string, Typed>;
  const i32 = (n: string) => a[n] as Int32Array;
  const u32 = (n: string) => a[n] as Uint32Array;
  const u16 = (n: string) => a[n] as Uint16Array;
  const f64 = (n: string) => a[n] as Float64Array;
  const coded = (name: (typeof CODED)[number]): Coded => ({ values: header.dictionaries[name], codes: i32(`${name}Codes`) });
  const columns: ItemColumns = {
    ids: header.ids,
    userId: coded('userId'),
    kind: coded('kind'),
    scope: coded('scope'),
    tier: coded('tier'),
    primaryTopic: coded('primaryTopic'),
    contentTypes: coded('contentTypes'),
    sessionId: coded('sessionId'),
    quality: f64('quality'),
    confidence: f64('confidence'),
    createdAt: f64('createdAt'),
    expiresAt: f64('expiresAt'),
    sourceTurnOffsets: i32('sourceTurnOffsets'),
    sourceTurns: i32('sourceTurns'),
    // A segment written before items carried `asks` has none of them asking.
    asks: (a.asks as Uint8Array | undefined) ?? new Uint8Array(header.ids.length),
  };
  return new SearchSegment(
    header.terms,
    columns,
    { title: { offsets: i32('titleOffsets'), docs: i32('titleDocs'), tfs: u16('titleTfs') }, text: { offsets: i32('textOffsets'), docs: i32('textDocs'), tfs: u16('textTfs') } },
    { title: u32('titleLengths'), text: u32('textLengths') },
    { offsets: i32('vectorOffsets'), terms: i32('vectorTerms'), tfs: u16('vectorTfs'), lengths: u32('vectorLengths') },
    header.embedding ? { ...header.embedding, codes: a.embeddingCodes as Int8Array, scales: a.embeddingScales as Float32Array } : undefined,
  );
}
