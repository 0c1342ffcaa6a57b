/**
 * Per-word BM25+ scores of many rows — matched items, or groups of them (a turn's window, the
 * turns a summary covers) — held in flat typed arrays. A search over 100,000 items matches
 * tens of thousands of them; one Map per row made the garbage collector the largest cost of a
 * search (BENCHMARKS.md, search-latency: CPU per search). A score is positive once its word
 * is matched (BM25+'s idf and its floor d are both positive), so 0 means "not matched".
 */
export class WordScores {
  /** Rows held. */
  size = 0;
  /** Row r's item: segment at[2r], ordinal at[2r + 1]. */
  private at: Int32Array;
  private scores: Float64Array;
  /** A group row's members (rows of another table), in the order added. */
  private readonly members: number[][] | undefined;

  /**
   * @param width distinct query words (a row's scores are indexed by word)
   * @param withMembers rows are groups whose members are kept
   */
  constructor(
    readonly width: number,
    withMembers = false,
    capacity = 256,
  ) {
    this.at = new Int32Array(2 * capacity);
    this.scores = new Float64Array(capacity * width);
    this.members = withMembers ? [] : undefined;
  }

  /** A new row for item `doc` of segment `segment`; its number. */
  add(segment: number, doc: number): number {
    if (2 * this.size === this.at.length) {
      const at = new Int32Array(2 * this.at.length);
      const scores = new Float64Array(2 * this.scores.length);
      at.set(this.at);
      scores.set(this.scores);
      this.at = at;
      this.scores = scores;
    }
    this.at[2 * this.size] = segment;
    this.at[2 * this.size + 1] = doc;
    return this.size++;
  }

  segmentOf(row: number): number {
    return this.at[2 * row] ?? 0;
  }

  docOf(row: number): number {
    return this.at[2 * row + 1] ?? 0;
  }

  addScore(row: number, word: number, score: number): void {
    const i = row * this.width + word;
    this.scores[i] = (this.scores[i] ?? 0) + score;
  }

  /** Adds another table's row to this row word by word — or, `highest`, keeps each word's higher score — and records it as a member. */
  merge(row: number, from: WordScores, fromRow: number, highest = false): void {
    for (let word = 0; word < this.width; word++) {
      const score = from.scores[fromRow * from.width + word] ?? 0;
      if (score === 0) continue;
      const i = row * this.width + word;
      const old = this.scores[i] ?? 0;
      this.scores[i] = highest ? Math.max(old, score) : old + score;
    }
    if (!this.members) return;
    const members = this.members[row];
    if (members) members.push(fromRow);
    else this.members[row] = [fromRow];
  }

  /** BM25+ of the row: the sum of its scores times the weights of the words matched (wordWeights in lexical-scores.ts). */
  bm25(row: number, weights: Float64Array): number {
    let sum = 0;
    let matched = 0;
    for (let word = 0; word < this.width; word++) {
      const score = this.scores[row * this.width + word] ?? 0;
      if (score === 0) continue;
      sum += score;
      matched += weights[word] ?? 0;
    }
    return sum * matched;
  }

  /** The row's scores of the words it matched, in the query's order. */
  perTerm(row: number, words: readonly string[]): Map<string, number> {
    const out = new Map<string, number>();
    for (let word = 0; word < this.width; word++) {
      const score = this.scores[row * this.width + word] ?? 0;
      if (score !== 0) out.set(words[word] ?? '', score);
    }
    return out;
  }

  /** The member rows of a group row, in the order added (undefined when the table keeps none). */
  membersOf(row: number): number[] | undefined {
    return this.members && (this.members[row] ?? []);
  }
}

/**
 * The positions of the `limit` highest values, highest first, ties in position order: what a
 * stable sort by value, cut at `limit`, keeps — found with a heap of `limit` positions rather
 * than a sort of every value.
 */
export function topPositions(values: Float64Array, limit: number): number[] {
  // The root is the worst kept: the lowest value; of equal values, the latest position.
  const heap: number[] = [];
  const worse = (a: number, b: number) => {
    const va = values[heap[a] ?? 0] ?? 0;
    const vb = values[heap[b] ?? 0] ?? 0;
    return va < vb || (va === vb && (heap[a] ?? 0) > (heap[b] ?? 0));
  };
  const swap = (a: number, b: number) => {
    [heap[a], heap[b]] = [heap[b] ?? 0, heap[a] ?? 0];
  };
  for (let position = 0; position < values.length; position++) {
    if (heap.length < limit) {
      heap.push(position);
      for (let i = heap.length - 1; i > 0 && worse(i, (i - 1) >> 1); i = (i - 1) >> 1) swap(i, (i - 1) >> 1);
    } else if (limit > 0 && (values[position] ?? 0) > (values[heap[0] ?? 0] ?? 0)) {
      // A later position with an equal value never displaces an earlier one.
      heap[0] = position;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const worst = [i, l, l + 1].reduce((w, c) => (c < heap.length && worse(c, w) ? c : w));
        if (worst === i) break;
        swap(i, worst);
        i = worst;
      }
    }
  }
  return heap.sort((a, b) => (values[b] ?? 0) - (values[a] ?? 0) || a - b);
}
