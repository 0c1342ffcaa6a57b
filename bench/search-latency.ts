/**
 * Benchmark (issue 7): memory.search's own time for one user at 1,000 / 10,000 / 100,000
 * items — what the api function does per request after loading the corpus: build the
 * search index over the live, filtered items and rank (lib/domain/memory-search.ts).
 * Items are LoCoMo sentences (every dialog line of the five conversations), cycled with
 * a suffix to reach the size; queries are LoCoMo questions. Loading the corpus from
 * DynamoDB and S3 is not included.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { newTierItem } from '../lib/domain/memory-tiers.js';
import { searchMemory } from '../lib/domain/memory-search.js';
import type { MemoryItem } from '../lib/domain/memory-item.js';

export interface SearchLatencyRow {
  items: number;
  queries: number;
  p50: number;
  p95: number;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};

export function benchSearchLatency(dir: string, sizes: readonly number[]): SearchLatencyRow[] {
  const lines: string[] = [];
  const questions: string[] = [];
  for (const f of ['conv-26.json', 'conv-30.json', 'conv-41.json', 'conv-42.json', 'conv-43.json']) {
    const conv = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown> & { qa: Array<{ question: string }> };
    for (const [k, v] of Object.entries(conv)) if (/^session_\d+$/.test(k) && Array.isArray(v)) for (const l of v as Array<{ text: string }>) lines.push(l.text);
    questions.push(...conv.qa.map((q) => q.question));
  }
  const now = new Date('2026-06-01T00:00:00Z');
  const rows: SearchLatencyRow[] = [];
  for (const n of sizes) {
    const items: MemoryItem[] = Array.from({ length: n }, (_, i) => ({
      ...newTierItem('bench-user', 'long_term', { text: `${lines[i % lines.length]} (${Math.floor(i / lines.length)})`, sourceTurns: [i + 1] }, now),
      id: `mem:${i}`,
    }));
    const queries = n >= 100_000 ? 5 : 20;
    const times: number[] = [];
    for (let q = 0; q < queries; q++) {
      const t0 = performance.now();
      searchMemory(items, { query: questions[(q * 37) % questions.length] ?? 'what', limit: 10 }, now);
      times.push(performance.now() - t0);
    }
    rows.push({ items: n, queries, p50: quantile(times, 0.5), p95: quantile(times, 0.95) });
  }
  return rows;
}
