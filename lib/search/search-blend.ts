/**
 * What a lexical ranking blends an item's relevance with: its quality (trust) and its recency
 * (docs/memory-api.md, *Search*); and the rounding of every score a search returns.
 */
import type { IndexedItem } from './indexed-item.js';

export const SEARCH_WEIGHTS = { relevance: 0.7, quality: 0.2, recency: 0.1 } as const;
export const RECENCY_HALF_LIFE_DAYS = 30;

export const round = (n: number) => Math.round(n * 10_000) / 10_000;

export const epochMs = (t: string | number): number => (typeof t === 'number' ? t : Date.parse(t));

export function recency(createdAt: string | number, now: Date): number {
  const ageDays = Math.max(0, (now.getTime() - epochMs(createdAt)) / 86_400_000);
  return Number.isFinite(ageDays) ? 0.5 ** (ageDays / RECENCY_HALF_LIFE_DAYS) : 0;
}

/** What a lexical ranking multiplies an item's relevance by: its quality (trust) and recency, weighted. */
export function blendOf(
  item: Pick<IndexedItem, 'quality' | 'createdAt'>,
  now: Date,
): { quality: number; recency: number; factor: number } {
  const r = recency(item.createdAt, now);
  return {
    quality: item.quality,
    recency: r,
    factor: SEARCH_WEIGHTS.relevance + SEARCH_WEIGHTS.quality * item.quality + SEARCH_WEIGHTS.recency * r,
  };
}
