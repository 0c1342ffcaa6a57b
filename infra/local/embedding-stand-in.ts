/**
 * The local stand-in for Amazon Titan Text Embeddings V2 on Bedrock Runtime's
 * InvokeModel route (POST /model/{modelId}/invoke), served by the Converse stand-in
 * (converse-server.ts). It is NOT an embedding model: its vector is hashed word features
 * (each stemmed content word adds ±1 to one of the dimensions), deterministic and cheap, so that
 * the hybrid path's plumbing (the grant, the request, the segment's vectors, the fusion) runs
 * locally. Two texts sharing words are near, synonyms are not: a figure measured with it says
 * nothing about retrieval quality, and none is reported (docs/search-index.md).
 *
 * The body is checked as Titan V2 documents it
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html):
 * `inputText` a non-empty string (at most 50,000 characters:
 * https://docs.aws.amazon.com/bedrock/latest/userguide/titan-embedding-models.html),
 * `dimensions` 256, 512 or 1024 (default 1024), `normalize` a boolean (default true),
 * `embeddingTypes` a list of "float" and/or "binary"; nothing else. The answer carries
 * `embedding`, `inputTextTokenCount` and `embeddingsByType`.
 */
import { stemmer } from 'stemmer';
import { fnv1a32 } from '../../lib/kernel/stable-hash.js';
import { contentWords, estimateTokens } from '../../lib/kernel/text.js';
import type { ConverseError } from './converse-protocol.js';

export const STAND_IN_EMBEDDING_MODEL = 'amazon.titan-embed-text-v2:0';
const DIMENSIONS = [256, 512, 1024];
const MAX_CHARS = 50_000;
const KEYS = new Set(['inputText', 'dimensions', 'normalize', 'embeddingTypes']);

export interface EmbeddingInvocation {
  modelId: string;
  body: Record<string, unknown>;
}

const invalid = (message: string): ConverseError => ({ status: 400, errorType: 'ValidationException', message });

/** Bedrock's refusal of this InvokeModel request, or null when Titan V2 would take it. */
export function embeddingRefusal(modelId: string, body: unknown): ConverseError | null {
  if (modelId !== STAND_IN_EMBEDDING_MODEL)
    return invalid(`the local stand-in serves InvokeModel for ${STAND_IN_EMBEDDING_MODEL} only, not ${modelId}`);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return invalid('Malformed input request: expected a JSON object');
  const b = body as Record<string, unknown>;
  const extra = Object.keys(b).find((k) => !KEYS.has(k));
  if (extra) return invalid(`Malformed input request: extraneous key [${extra}] is not permitted`);
  if (typeof b.inputText !== 'string' || b.inputText.trim() === '')
    return invalid('Malformed input request: inputText must be a non-empty string');
  if (b.inputText.length > MAX_CHARS)
    return invalid(`Malformed input request: inputText is longer than ${MAX_CHARS} characters`);
  if (b.dimensions !== undefined && !DIMENSIONS.includes(b.dimensions as number))
    return invalid(`Malformed input request: dimensions must be one of ${DIMENSIONS.join(', ')}`);
  if (b.normalize !== undefined && typeof b.normalize !== 'boolean')
    return invalid('Malformed input request: normalize must be a boolean');
  const types = b.embeddingTypes;
  if (
    types !== undefined &&
    (!Array.isArray(types) || types.length === 0 || types.some((t) => t !== 'float' && t !== 'binary'))
  ) {
    return invalid('Malformed input request: embeddingTypes must list "float" and/or "binary"');
  }
  return null;
}

/** The stand-in's vector of a text: hashed, stemmed word features, unit length when `normalize`. */
export function standInVector(text: string, dimensions: number, normalize = true): number[] {
  const v = new Array<number>(dimensions).fill(0);
  for (const w of contentWords(text)) {
    const h = fnv1a32(stemmer(w));
    v[h % dimensions] = (v[h % dimensions] ?? 0) + (h & 0x8000_0000 ? -1 : 1);
  }
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return normalize && norm > 0 ? v.map((x) => x / norm) : v;
}

/** What makes the stand-in's vectors: standInVector, or a test's own. */
export type Embedder = (text: string, dimensions: number, normalize: boolean) => number[];

/** Titan V2's answer to a valid body, from the embedder's vector. */
export function embeddingAnswer(
  body: Record<string, unknown>,
  embedder: Embedder = standInVector,
): Record<string, unknown> {
  const dimensions = (body.dimensions as number | undefined) ?? 1024;
  const embedding = embedder(body.inputText as string, dimensions, (body.normalize as boolean | undefined) ?? true);
  const types = (body.embeddingTypes as string[] | undefined) ?? ['float'];
  const byType: Record<string, number[]> = {};
  if (types.includes('float')) byType.float = embedding;
  if (types.includes('binary')) byType.binary = embedding.map((x) => (x > 0 ? 1 : 0));
  return { embedding, inputTextTokenCount: estimateTokens(body.inputText as string), embeddingsByType: byType };
}
