/**
 * BM25 search over a user's documents (req R-ASM-4, R-GATE-5).
 *
 * Retrieval is MiniSearch (BM25+ ranking). The seed's thresholds (dedup > 0.8, promotion
 * > 0.7) need a similarity in [0, 1], which raw BM25 scores are not: measured here, even an
 * identical text scored 0.44 of its own score once indexed. So similarity is the cosine of
 * BM25-weighted term vectors of the texts (titles are left out: models name the same fact
 * differently) — each term weighted by BM25's IDF and its saturated, length-normalised
 * frequency (k1 = 1.2, b = 0.75) against this corpus. A word the corpus has never seen is
 * weighted as if one document held it: in a user's handful of staged items an unseen word
 * would otherwise outweigh everything shared. Identical texts score 1, texts sharing no
 * content word 0, and it is symmetric.
 */
import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import { baseOf } from '../kernel/irregular-forms.js';
import { isStopword, words } from '../kernel/text.js';

export interface SearchableDoc {
  /** Unique within the index, e.g. a path relative to Knowledge/. */
  id: string;
  title: string;
  text: string;
}

const K1 = 1.2;
const B = 0.75;
/** Documents retrieved by BM25 before similarity is computed on them. */
const SIMILARITY_CANDIDATES = 50;

export interface IndexOptions {
  /**
   * Reduce words to their Porter stems (`researched` and `researching` → `research`) for
   * both BM25 and the similarity vectors. Promotion's recurrence uses it (with `baseForms`);
   * the other gates do not (their thresholds were set on unstemmed words). @default false
   */
  stem?: boolean;
  /** With `stem`: an irregular form counts as its base (`bought` → `buy`: irregular-forms.ts). @default false */
  baseForms?: boolean;
}

/** A word as both BM25 and the vectors index it (IndexOptions). */
const normaliser =
  ({ stem = false, baseForms = false }: IndexOptions) =>
  (t: string): string =>
    stem ? stemmer(baseForms ? baseOf(t) : t) : t;

const termsOf =
  (normal: (t: string) => string) =>
  (text: string): string[] =>
    words(text.replace(/_/g, ' '))
      .filter((t) => t.length >= 2 && !isStopword(t) && !/^\d+$/.test(t))
      .map(normal);
/** How often each term occurs. */
export const counts = (tokens: readonly string[]): Map<string, number> => {
  const m = new Map<string, number>();
  for (const t of tokens) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
};

export class KnowledgeSearch<D extends SearchableDoc> {
  private readonly index: MiniSearch<SearchableDoc>;
  private readonly docs = new Map<string, { doc: D; tf: Map<string, number>; length: number }>();
  private readonly df = new Map<string, number>();
  private totalLength = 0;
  private readonly terms: (text: string) => string[];

  constructor(docs: readonly D[] = [], options: IndexOptions = {}) {
    const normal = normaliser(options);
    this.terms = termsOf(normal);
    this.index = new MiniSearch<SearchableDoc>({
      idField: 'id',
      fields: ['title', 'text'],
      tokenize: (text) => words(text.replace(/_/g, ' ')),
      processTerm: (t) => (t.length < 2 || isStopword(t) ? null : normal(t)),
    });
    for (const d of docs) this.add(d);
  }

  get size(): number {
    return this.docs.size;
  }

  add(doc: D): void {
    const old = this.docs.get(doc.id);
    if (old) {
      this.index.discard(doc.id);
      for (const t of old.tf.keys()) this.df.set(t, (this.df.get(t) ?? 1) - 1);
      this.totalLength -= old.length;
    }
    const tokens = this.terms(doc.text);
    const tf = counts(tokens);
    for (const t of tf.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
    this.totalLength += tokens.length;
    this.docs.set(doc.id, { doc, tf, length: tokens.length });
    this.index.add({ id: doc.id, title: doc.title, text: doc.text });
  }

  /** Documents matching any of the words, best first (BM25+). */
  search(query: string, limit = 10): Array<{ doc: D; score: number }> {
    if (this.docs.size === 0) return [];
    return this.index
      .search(query, { combineWith: 'OR' })
      .slice(0, limit)
      .flatMap((r) => {
        const entry = this.docs.get(String(r.id));
        return entry ? [{ doc: entry.doc, score: r.score }] : [];
      });
  }

  /** Documents sharing a content word with `text` (retrieved with `title` too), with their similarity in [0, 1], best first. */
  similar(text: string, title = ''): Array<{ doc: D; similarity: number }> {
    if (this.docs.size === 0 || this.terms(text).length === 0) return [];
    return this.scored(text, `${title} ${text}`, SIMILARITY_CANDIDATES)
      .map(({ doc, similarity }) => ({ doc, similarity }))
      .filter((r) => r.similarity > 0)
      .sort((a, b) => b.similarity - a.similarity);
  }

  /**
   * The `limit` best BM25 matches of a query, each with its BM25 score and its similarity
   * (cosine, as in `similar`) to the query, BM25 order.
   */
  rank(query: string, limit: number): Array<{ doc: D; bm25: number; similarity: number }> {
    return this.scored(query, query, limit);
  }

  /** BM25 retrieval of `searchText`, each hit with its cosine similarity to `vectorText`. */
  private scored(
    vectorText: string,
    searchText: string,
    limit: number,
  ): Array<{ doc: D; bm25: number; similarity: number }> {
    const tokens = this.terms(vectorText);
    const q = this.vector(counts(tokens), tokens.length);
    return this.search(searchText, limit).map(({ doc, score }) => {
      const entry = this.docs.get(doc.id);
      return {
        doc,
        bm25: score,
        similarity: entry && tokens.length > 0 ? cosine(q, this.vector(entry.tf, entry.length)) : 0,
      };
    });
  }

  private vector(tf: ReadonlyMap<string, number>, length: number): Map<string, number> {
    const n = this.docs.size;
    const avgdl = n > 0 ? this.totalLength / n : length;
    const v = new Map<string, number>();
    for (const [t, f] of tf) {
      const df = Math.max(1, this.df.get(t) ?? 0);
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      v.set(t, (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * length) / (avgdl || 1))));
    }
    return v;
  }
}

/** The cosine of two sparse term vectors (search and the gates share it). */
export function cosine(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (const [t, w] of a) {
    na += w * w;
    const o = b.get(t);
    if (o !== undefined) dot += w * o;
  }
  for (const w of b.values()) nb += w * w;
  return na > 0 && nb > 0 ? Math.min(1, dot / Math.sqrt(na * nb)) : 0;
}
