/**
 * A search segment as bytes (S3's segment objects): a JSON header (dictionaries, ids, array
 * layout), then the arrays, 8-byte aligned, so loading one is a JSON parse of the header plus
 * array views over one buffer.
 */
import type { Coded, ItemColumns } from './indexed-item.js';
import { SearchSegment } from './search-segment.js';

const MAGIC = 'RMSEG1';
type Typed = Int32Array | Uint32Array | Uint16Array | Uint8Array | Float64Array | Int8Array | Float32Array;
const TYPES = {
  i32: Int32Array,
  u32: Uint32Array,
  u16: Uint16Array,
  u8: Uint8Array,
  f64: Float64Array,
  i8: Int8Array,
  f32: Float32Array,
} as const;
type TypeName = keyof typeof TYPES;
const typeName = (a: Typed): TypeName =>
  (Object.keys(TYPES) as TypeName[]).find((name) => a instanceof TYPES[name]) ?? 'f64';

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
    ...(segment.embeddings
      ? { embeddingCodes: segment.embeddings.codes, embeddingScales: segment.embeddings.scales }
      : {}),
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
  const embedding = segment.embeddings
    ? { modelId: segment.embeddings.modelId, dimensions: segment.embeddings.dimensions }
    : undefined;
  const header = new TextEncoder().encode(
    JSON.stringify({ magic: MAGIC, terms: segment.terms, ids: segment.columns.ids, dictionaries, layout, embedding }),
  );
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
  const a = Object.fromEntries(
    header.layout.map(([name, type, offset, length]) => [name, new TYPES[type](body, offset, length)]),
  ) as Record<string, Typed>;
  const i32 = (n: string) => a[n] as Int32Array;
  const u32 = (n: string) => a[n] as Uint32Array;
  const u16 = (n: string) => a[n] as Uint16Array;
  const f64 = (n: string) => a[n] as Float64Array;
  const coded = (name: (typeof CODED)[number]): Coded => ({
    values: header.dictionaries[name],
    codes: i32(`${name}Codes`),
  });
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
    {
      title: { offsets: i32('titleOffsets'), docs: i32('titleDocs'), tfs: u16('titleTfs') },
      text: { offsets: i32('textOffsets'), docs: i32('textDocs'), tfs: u16('textTfs') },
    },
    { title: u32('titleLengths'), text: u32('textLengths') },
    { offsets: i32('vectorOffsets'), terms: i32('vectorTerms'), tfs: u16('vectorTfs'), lengths: u32('vectorLengths') },
    header.embedding
      ? { ...header.embedding, codes: a.embeddingCodes as Int8Array, scales: a.embeddingScales as Float32Array }
      : undefined,
  );
}
