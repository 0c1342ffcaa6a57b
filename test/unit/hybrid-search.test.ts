/**
 * Hybrid retrieval's plumbing: vectors quantised into a segment and back, carried by
 * bytes and merges; the vector ranking fused with the lexical ones (and the lexical ranking
 * unchanged without a query vector); compactions embedding what they fold; the Titan V2 adapter's
 * request and errors; the local stand-in's checks. No figure here says anything about retrieval
 * quality: the vectors are made up (a topic table, or the stand-in's hashed words).
 */
import { describe, expect, it } from 'vitest';
import { embeddingRefusal, standInVector } from '../../infra/local/embedding-stand-in.js';
import { MAX_INPUT_CHARS, BedrockTitanEmbeddings } from '../../lib/model/titan-embeddings.adapter.js';
import {
  mergeEmbeddings,
  nearest,
  type QueryVector,
  quantise,
  unit,
  vectorOf,
} from '../../lib/search/embedding-vectors.js';
import type { MemoryItem } from '../../lib/items/memory-item.js';
import { rankIndex } from '../../lib/search/memory-search.js';
import { indexOf, SearchSegments, segmentOf } from '../../lib/search/search-segments.js';
import { newTierItem } from '../../lib/tiers/memory-tiers.js';
import { mergeSegments, type SearchSegment } from '../../lib/search/search-segment.js';
import { segmentFromBytes, segmentToBytes } from '../../lib/search/segment-bytes.js';
import {
  type EmbeddingModel,
  ModelAccessDeniedError,
  ModelUnavailableError,
} from '../../lib/model/language-model.port.js';
import { LiveSearchIndex } from '../../lib/search/search-index.js';
import { MemorySearchIndexStore } from '../../lib/search/search-index.fake.js';

const now = new Date('2026-06-01T00:00:00Z');
const MODEL = 'amazon.titan-embed-text-v2:0';
const DIMS = 256;

const TEXTS = [
  'We adopted a puppy from the shelter last month',
  'The hybrid car needs new tyres before the trip',
  'Caroline painted a sunrise over the lake',
  'Melanie ran a charity race for mental health',
  'The pottery class fired the glazed bowls',
];
const item = (i: number, extra: Partial<MemoryItem> = {}): MemoryItem => ({
  ...newTierItem(
    'u1',
    'long_term',
    { text: TEXTS[i % TEXTS.length] ?? '', sourceTurns: [i + 1] },
    new Date(now.getTime() - i * 3_600_000),
  ),
  id: `mem:${i}`,
  ...extra,
});
const items = TEXTS.map((_, i) => item(i));

/** A made-up embedding: one axis per topic, so a text is near its topic's words whatever they are. */
const TOPICS: Array<RegExp> = [/puppy|dog|canine|pet/i, /car|vehicle|tyres|automobile/i, /paint|sunrise|art/i];
function topicVector(text: string): Float32Array {
  const v = new Float32Array(DIMS);
  TOPICS.forEach((t, axis) => {
    if (t.test(text)) v[axis] = 1;
  });
  v[DIMS - 1] = 0.1;
  return unit(v);
}
const topicModel = (calls: string[] = []): EmbeddingModel => ({
  modelId: MODEL,
  dimensions: DIMS,
  embed: async (texts) => {
    calls.push(...texts);
    return texts.map((t) => (t.trim() === '' ? null : topicVector(t)));
  },
});
const embedded = (list: readonly MemoryItem[]) =>
  segmentOf(
    list,
    quantise(
      MODEL,
      DIMS,
      list.map((i) => topicVector(i.text)),
    ),
  );
const query = (text: string): QueryVector => ({ modelId: MODEL, values: topicVector(text) });
const ids = (hits: ReadonlyArray<{ item: { id: string } }>) => hits.map((h) => h.item.id);

describe('embedding vectors in a segment', () => {
  it('quantise to int8 rows whose cosine with the original stays above 0.999, a blank text getting none', () => {
    const v = unit(Float32Array.from({ length: DIMS }, (_, i) => Math.sin(i * 1.7) * (i % 7)));
    const e = quantise(MODEL, DIMS, [v, null]);
    const back = vectorOf(e, 0) as Float32Array;
    expect(back.reduce((s, x, i) => s + x * (v[i] ?? 0), 0)).toBeGreaterThan(0.999);
    expect(vectorOf(e, 1)).toBeNull();
    expect(nearest(e, v, 0.5).map(([doc]) => doc)).toEqual([0]);
  });

  it('load back from bytes; a segment without vectors writes the same bytes as before', () => {
    const seg = embedded(items);
    const loaded = segmentFromBytes(segmentToBytes(seg));
    expect(loaded.embeddings?.modelId).toBe(MODEL);
    expect([...(loaded.embeddings?.codes ?? [])]).toEqual([...(seg.embeddings?.codes ?? [])]);
    expect([...(loaded.embeddings?.scales ?? [])]).toEqual([...(seg.embeddings?.scales ?? [])]);
    const plain = segmentOf(items);
    expect(segmentFromBytes(segmentToBytes(plain)).embeddings).toBeUndefined();
    expect(new TextDecoder().decode(segmentToBytes(plain).subarray(4, 400))).not.toContain('embedding');
  });

  it('are carried by a merge; a part of another model (or none) leaves its items without', () => {
    const a = embedded(items.slice(0, 2));
    const b = segmentOf(items.slice(2, 4));
    const c = embedded(items.slice(4));
    const merged = mergeSegments([a, b, c].map((segment) => ({ segment, keep: () => true })));
    expect([...(merged.embeddings?.scales ?? [])].map((s) => s > 0)).toEqual([true, true, false, false, true]);
    expect(vectorOf(merged.embeddings as never, 4)).toEqual(vectorOf(c.embeddings as never, 0));
    const other = { ...(c.embeddings as NonNullable<SearchSegment['embeddings']>), modelId: 'another' };
    expect(
      [
        ...(mergeEmbeddings(
          [a.embeddings, other],
          [
            { part: 0, doc: 0 },
            { part: 1, doc: 0 },
          ],
        )?.scales ?? []),
      ].map((s) => s > 0),
    ).toEqual([false, true]);
  });
});

describe('the ranking with a query vector', () => {
  const index = new SearchSegments([{ segment: embedded(items) }]);

  it('is the lexical ranking, unchanged, without one or when no vector clears the floor', () => {
    for (const q of ['puppy shelter', 'car tyres trip', 'sunrise lake']) {
      const lexical = rankIndex(indexOf(items), { query: q, limit: 5 }, now);
      expect(rankIndex(index, { query: q, limit: 5 }, now)).toEqual(lexical);
      expect(
        rankIndex(index, { query: q, limit: 5 }, now, 0, { modelId: MODEL, values: new Float32Array(DIMS) }),
      ).toEqual(lexical);
      // Vectors of another model are not compared.
      expect(rankIndex(index, { query: q, limit: 5 }, now, 0, { ...query(q), modelId: 'other' })).toEqual(lexical);
    }
  });

  it('finds by meaning what shares no word with the question, and fuses both rankings', () => {
    expect(rankIndex(index, { query: 'my canine companion', limit: 5 }, now)).toEqual([]);
    expect(
      ids(rankIndex(index, { query: 'my canine companion', limit: 5 }, now, 0, query('my canine companion'))),
    ).toEqual(['mem:0']);
    const both = rankIndex(index, { query: 'automobile sunrise', limit: 5 }, now, 0, query('automobile sunrise'));
    expect(ids(both)).toContain('mem:1');
    expect(ids(both)).toContain('mem:2');
  });

  it('applies the filters and hides superseded or removed items', () => {
    const staged = new SearchSegments([{ segment: embedded([item(0, { kind: 'staged' }), ...items.slice(1)]) }]);
    expect(rankIndex(staged, { query: 'canine', limit: 5 }, now, 0, query('canine'))).toEqual([]);
    const superseded = new SearchSegments([
      { segment: embedded(items) },
      { segment: segmentOf([item(0, { text: 'a note about stamps' })]) },
    ]);
    expect(ids(rankIndex(superseded, { query: 'canine', limit: 5 }, now, 0, query('canine')))).toEqual([]);
  });
});

/** The items in memory, each marked as changed, and an in-memory index store. */
function world(embeddings: EmbeddingModel) {
  const stored = new Map(items.map((i) => [i.id, i]));
  const store = new MemorySearchIndexStore();
  for (const i of items) store.mark(i.id);
  const { marks, segments } = store;
  const catalog = {
    itemsById: async (_u: string, wanted: readonly string[]) =>
      new Map(wanted.flatMap((id) => (stored.has(id) ? [[id, stored.get(id) as MemoryItem] as const] : []))),
  };
  return {
    index: new LiveSearchIndex({ store, catalog, clock: { now: () => now }, embeddings, marks: store.timing }),
    marks,
    segments,
  };
}

describe('a compaction on a stage that embeds', () => {
  it('stores the vectors of the items it folds (their text); the overlay has none', async () => {
    const calls: string[] = [];
    const w = world(topicModel(calls));
    const overlay = (await w.index.view('u1')).entries.at(-1)?.segment;
    expect(overlay?.embeddings).toBeUndefined();
    expect(calls).toEqual([]);
    await w.index.compact('u1');
    expect(calls).toEqual(TEXTS);
    const segment = [...w.segments.values()][0];
    expect(segment?.embeddings?.scales.every((s) => s > 0)).toBe(true);
    const view = await w.index.view('u1');
    expect(
      ids(rankIndex(new SearchSegments(view.entries), { query: 'canine', limit: 3 }, now, 0, query('canine'))),
    ).toEqual(['mem:0']);
  });

  it('writes nothing when the model fails: the marks wait for the next compaction', async () => {
    const failing: EmbeddingModel = {
      modelId: MODEL,
      dimensions: DIMS,
      embed: async () => Promise.reject(new ModelUnavailableError('throttled')),
    };
    const w = world(failing);
    await expect(w.index.compact('u1')).rejects.toBeInstanceOf(ModelUnavailableError);
    expect(w.segments.size).toBe(0);
    expect(w.marks.size).toBe(items.length);
  });
});

/** A Bedrock Runtime client that answers InvokeModel with `answer` (or throws it) and records the commands. */
function fakeClient(answer: (body: Record<string, unknown>) => unknown) {
  const sent: Array<{ modelId: string; body: Record<string, unknown> }> = [];
  const client = {
    send: async (command: { input: { modelId: string; body: string } }) => {
      const body = JSON.parse(command.input.body) as Record<string, unknown>;
      sent.push({ modelId: command.input.modelId, body });
      const a = answer(body);
      if (a instanceof Error) throw a;
      return { body: new TextEncoder().encode(JSON.stringify(a)) };
    },
  };
  return { client: client as never, sent };
}
const awsError = (name: string, status: number) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });

describe('the Titan Text Embeddings V2 adapter', () => {
  it("sends Titan V2's body (text cut to its limit, blank texts not sent) and reads the vector", async () => {
    const { client, sent } = fakeClient((b) => ({
      embedding: standInVector(String(b.inputText), 256),
      inputTextTokenCount: 3,
    }));
    const model = new BedrockTitanEmbeddings(client, MODEL, 256);
    const out = await model.embed(['hello reef', '   ', 'x'.repeat(MAX_INPUT_CHARS + 10)]);
    expect(out[1]).toBeNull();
    expect(out[0]).toHaveLength(256);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toEqual({ modelId: MODEL, body: { inputText: 'hello reef', dimensions: 256, normalize: true } });
    expect(String(sent[1]?.body.inputText)).toHaveLength(MAX_INPUT_CHARS);
    for (const s of sent) expect(embeddingRefusal(s.modelId, s.body)).toBeNull();
  });

  it('names throttling unavailable, a denial denied, and refuses a vector of the wrong size', async () => {
    await expect(
      new BedrockTitanEmbeddings(fakeClient(() => awsError('ThrottlingException', 429)).client, MODEL, 256).embed([
        'a b',
      ]),
    ).rejects.toBeInstanceOf(ModelUnavailableError);
    await expect(
      new BedrockTitanEmbeddings(fakeClient(() => awsError('AccessDeniedException', 403)).client, MODEL, 256).embed([
        'a b',
      ]),
    ).rejects.toBeInstanceOf(ModelAccessDeniedError);
    await expect(
      new BedrockTitanEmbeddings(fakeClient(() => ({ embedding: [0.1, 0.2] })).client, MODEL, 256).embed(['a b']),
    ).rejects.toThrow(/embedding of 256/);
    expect(() => new BedrockTitanEmbeddings(fakeClient(() => ({})).client, MODEL, 300)).toThrow(/256, 512, 1024/);
  });

  it("gives each call the invocation's deadline as its abortSignal, and an aborted call is unavailable", async () => {
    // As the SDK does: a request whose abortSignal fires ends with an AbortError.
    const signals: Array<AbortSignal | undefined> = [];
    const client = {
      send: (_command: unknown, options?: { abortSignal?: AbortSignal }) => {
        signals.push(options?.abortSignal);
        return new Promise((_, reject) =>
          options?.abortSignal?.addEventListener('abort', () =>
            reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' })),
          ),
        );
      },
    };
    const deadline = new AbortController();
    const embedding = new BedrockTitanEmbeddings(client as never, MODEL, 256).embed(['a b', 'c d'], {
      signal: deadline.signal,
    });
    deadline.abort();
    await expect(embedding).rejects.toBeInstanceOf(ModelUnavailableError);
    expect(signals).toEqual([deadline.signal, deadline.signal]);
  });

  it("passes the compaction's deadline to the embedding calls of its delta", async () => {
    const seen: Array<AbortSignal | undefined> = [];
    const embed: EmbeddingModel['embed'] = async (texts, options) => {
      seen.push(options?.signal);
      return texts.map(() => null);
    };
    const model: EmbeddingModel = { modelId: MODEL, dimensions: DIMS, embed };
    const deadline = new AbortController();
    await world(model).index.compact('u1', 1, { signal: deadline.signal });
    expect(seen).toEqual([deadline.signal]);
  });
});

describe('the local Titan V2 stand-in', () => {
  it('refuses what Titan V2 refuses', () => {
    expect(
      embeddingRefusal(MODEL, { inputText: 'reef tank', dimensions: 512, normalize: true, embeddingTypes: ['float'] }),
    ).toBeNull();
    expect(embeddingRefusal('amazon.titan-embed-text-v1', { inputText: 'reef' })?.errorType).toBe(
      'ValidationException',
    );
    expect(embeddingRefusal(MODEL, { inputText: '  ' })?.message).toMatch(/non-empty/);
    expect(embeddingRefusal(MODEL, { inputText: 'reef', dimensions: 300 })?.message).toMatch(/dimensions/);
    expect(embeddingRefusal(MODEL, { inputText: 'reef', temperature: 0 })?.message).toMatch(
      /extraneous key \[temperature\]/,
    );
    expect(embeddingRefusal(MODEL, { inputText: 'x'.repeat(50_001) })?.message).toMatch(/50000/);
  });

  it('answers the same unit vector for the same text, nearer for shared words', () => {
    const a = standInVector('the reef tank heater', 256);
    expect(standInVector('the reef tank heater', 256)).toEqual(a);
    expect(Math.hypot(...a)).toBeCloseTo(1, 6);
    const dot = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * (y[i] ?? 0), 0);
    expect(dot(a, standInVector('a heater for the reef', 256))).toBeGreaterThan(
      dot(a, standInVector('pottery class glaze', 256)),
    );
  });
});
