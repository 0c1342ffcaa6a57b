/**
 * Hybrid retrieval: the embedding vectors a segment stores beside its BM25 columns,
 * and the ranking of a query's vector against them.
 *
 * Storage: one row of `dimensions` signed bytes per item (int8-quantised, the row's largest
 * component at ±127) and one float32 scale per item, chosen so that `codes × scale` has unit
 * length: the cosine of a unit query with item d is then `scale[d] · Σ q[i]·codes[d][i]`, no
 * norm computed at query time. At 256 dimensions an item costs 260 bytes (1,024 float32 would
 * be 4,096). A scale of 0 marks an item without a vector (blank text, or folded in before the
 * stage embedded): it ranks lexically only.
 *
 * A segment's vectors name the model and size they were made with; a query vector is compared
 * only with segments of the same model and size: after a stage changes either, older segments
 * rank lexically only, and a merge drops their vectors (mergeEmbeddings keeps the newest
 * part's model). docs/search-index.md, "Hybrid retrieval".
 */

/** The vectors of a segment's items, in ordinal order. */
export interface SegmentEmbeddings {
  modelId: string;
  dimensions: number;
  /** items × dimensions, row by row. */
  codes: Int8Array;
  /** Per item: the factor making its row a unit vector; 0 = no vector. */
  scales: Float32Array;
}

/** A query's vector and the model that made it. */
export interface QueryVector {
  modelId: string;
  values: Float32Array;
}

/** Vectors (null: none) → a segment's int8 columns. */
export function quantise(
  modelId: string,
  dimensions: number,
  vectors: ReadonlyArray<ArrayLike<number> | null>,
): SegmentEmbeddings {
  const codes = new Int8Array(vectors.length * dimensions);
  const scales = new Float32Array(vectors.length);
  vectors.forEach((v, doc) => {
    if (!v) return;
    if (v.length !== dimensions)
      throw new Error(`an embedding of ${v.length} dimensions in a segment of ${dimensions}`);
    let max = 0;
    for (let i = 0; i < dimensions; i++) max = Math.max(max, Math.abs(v[i] ?? 0));
    if (max === 0 || !Number.isFinite(max)) return;
    let norm = 0;
    for (let i = 0; i < dimensions; i++) {
      const c = Math.round(((v[i] ?? 0) / max) * 127);
      codes[doc * dimensions + i] = c;
      norm += c * c;
    }
    scales[doc] = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  });
  return { modelId, dimensions, codes, scales };
}

/** Item `doc`'s vector as stored (unit length), or null. */
export function vectorOf(e: SegmentEmbeddings, doc: number): Float32Array | null {
  const scale = e.scales[doc] ?? 0;
  if (scale === 0) return null;
  return Float32Array.from(e.codes.subarray(doc * e.dimensions, (doc + 1) * e.dimensions), (c) => c * scale);
}

/** Whether a query vector can be compared with these vectors. */
export const comparable = (e: SegmentEmbeddings | undefined, q: QueryVector): e is SegmentEmbeddings =>
  e !== undefined && e.modelId === q.modelId && e.dimensions === q.values.length;

/** The query as a unit vector (Titan normalises already; a stand-in may not). */
export function unit(values: ArrayLike<number>): Float32Array {
  let norm = 0;
  for (let i = 0; i < values.length; i++) norm += (values[i] ?? 0) ** 2;
  const n = Math.sqrt(norm);
  return Float32Array.from(values as ArrayLike<number>, (x) => (n > 0 ? x / n : 0));
}

/**
 * Every item of the segment whose cosine with the unit query `q` reaches `floor`, best first:
 * [doc, cosine] pairs. One pass of int8 × float products (256 per item at 256 dimensions).
 */
export function nearest(e: SegmentEmbeddings, q: Float32Array, floor: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const dims = e.dimensions;
  for (let doc = 0; doc < e.scales.length; doc++) {
    const scale = e.scales[doc] ?? 0;
    if (scale === 0) continue;
    let dot = 0;
    const base = doc * dims;
    for (let i = 0; i < dims; i++) dot += (q[i] ?? 0) * (e.codes[base + i] ?? 0);
    const cos = dot * scale;
    if (cos >= floor) out.push([doc, cos]);
  }
  return out.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
}

/**
 * The vectors of the items `kept` from several segments' embeddings, in order: the model of the
 * newest part that has vectors; items of parts without vectors, or with another model's, get none.
 */
export function mergeEmbeddings(
  parts: ReadonlyArray<SegmentEmbeddings | undefined>,
  kept: ReadonlyArray<{ part: number; doc: number }>,
): SegmentEmbeddings | undefined {
  const model = [...parts].reverse().find((p): p is SegmentEmbeddings => p !== undefined);
  if (!model) return undefined;
  const { modelId, dimensions } = model;
  const codes = new Int8Array(kept.length * dimensions);
  const scales = new Float32Array(kept.length);
  kept.forEach(({ part, doc }, n) => {
    const e = parts[part];
    if (!e || e.modelId !== modelId || e.dimensions !== dimensions) return;
    scales[n] = e.scales[doc] ?? 0;
    codes.set(e.codes.subarray(doc * dimensions, (doc + 1) * dimensions), n * dimensions);
  });
  return scales.some((s) => s > 0) ? { modelId, dimensions, codes, scales } : undefined;
}
