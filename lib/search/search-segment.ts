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
 * Its words are terms (search-terms.ts); its items' metadata are columns (indexed-item.ts); its
 * bytes are segment-bytes.ts.
 */
import { mergeEmbeddings, type SegmentEmbeddings } from './embedding-vectors.js';
import { counts } from '../knowledge/knowledge-search.js';
import { columnsOf, decode, type IndexedItem, type ItemColumns } from './indexed-item.js';
import { rawTokens, termOf, vectorTerms } from './search-terms.js';

/** The two fields BM25 scores, in MiniSearch's order (title first). */
export const FIELDS = ['title', 'text'] as const;
export type Field = (typeof FIELDS)[number];

interface Postings {
  /** offsets[t]..offsets[t+1] index `docs` and `tfs` for term t. */
  offsets: Int32Array;
  docs: Int32Array;
  tfs: Uint16Array;
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
  static build(
    items: ReadonlyArray<{ item: IndexedItem; title: string; text: string }>,
    embeddings?: SegmentEmbeddings,
  ): SearchSegment {
    if (embeddings && embeddings.scales.length !== items.length)
      throw new Error(`${embeddings.scales.length} embeddings for ${items.length} items`);
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
        for (const [term, tf] of counts(tokens.flatMap((t) => termOf(t) ?? [])))
          perField[field].push([idOf(term), doc, tf]);
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
    const vectors = {
      offsets,
      terms: Int32Array.from(flat, ([t]) => t),
      tfs: Uint16Array.from(flat, ([, f]) => Math.min(f, 65_535)),
      lengths: vectorLengths,
    };
    return new SearchSegment(
      [...dictionary.keys()],
      columnsOf(items.map((e) => e.item)),
      postings,
      lengths,
      vectors,
      embeddings,
    );
  }
}

/**
 * One segment holding the items of `parts` that `keep` keeps, in order, without tokenising
 * anything again: dictionaries are united, ordinals renumbered, postings concatenated (parts in
 * order, so each term's docs stay ascending).
 */
export function mergeSegments(
  parts: ReadonlyArray<{ segment: SearchSegment; keep: (doc: number) => boolean }>,
): SearchSegment {
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
    for (let d = 0; d < segment.size; d++)
      if (keep(d)) (ordinals[p] as Int32Array)[d] = kept.push({ part: p, doc: d }) - 1;
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
