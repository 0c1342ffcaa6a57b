/**
 * Per-word BM25+ scores of many rows — matched items, or groups of them (a turn's window, the
 * turns a summary covers) — held in flat typed arrays. A search over 100,000 items matches
 * tens of thousands of them; one Map per row made the garbage collector the largest cost of a
 * search (BENCHMARKS.md, search-latency: CPU per search).
 *
 * A row keeps the order in which its words were first scored, as a Map keeps insertion order:
 * BM25+'s sum runs in that order, so the floating-point result is the one a Map gave.
 */
export class WordScores {
  /** Rows held. */
  size = 0;
  private segments: Int32Array;
  private docs: Int32Array;
  private scores: Float64Array;
  private order: Uint16Array;
  private orderLength: Uint16Array;
  private members: Members | undefined;

  /**
   * @param width distinct query words (a row's scores are indexed by word)
   * @param withMembers rows are groups whose members (rows of another table) are kept, in the order added
   */
  constructor(
    readonly width: number,
    withMembers = false,
    capacity = 256,
  ) {
    this.segments = new Int32Array(capacity);
    this.docs = new Int32Array(capacity);
    this.scores = new Float64Array(capacity * width);
    this.order = new Uint16Array(capacity * width);
    this.orderLength = new Uint16Array(capacity);
    this.members = withMembers ? new Members(capacity) : undefined;
  }

  /** A new row for item `doc` of segment `segment`; its number. */
  add(segment: number, doc: number): number {
    if (this.size === this.segments.length) this.grow();
    const row = this.size++;
    this.segments[row] = segment;
    this.docs[row] = doc;
    return row;
  }

  segmentOf(row: number): number {
    return this.segments[row] ?? 0;
  }

  docOf(row: number): number {
    return this.docs[row] ?? 0;
  }

  /** Adds to the row's score of a word (scores are positive: 0 is "not matched"). */
  addScore(row: number, word: number, score: number): void {
    const at = row * this.width + word;
    const old = this.scores[at] ?? 0;
    if (old === 0) this.note(row, word);
    this.scores[at] = old + score;
  }

  /** Adds another table's row to this row, word by word in that row's order, and records it as a member. */
  addRow(row: number, from: WordScores, fromRow: number): void {
    const base = fromRow * from.width;
    const n = from.orderLength[fromRow] ?? 0;
    for (let k = 0; k < n; k++) {
      const word = from.order[base + k] ?? 0;
      this.addScore(row, word, from.scores[base + word] ?? 0);
    }
    this.members?.push(row, fromRow);
  }

  /** Raises this row's score of each word to another table's row's, if higher, and records it as a member. */
  raiseRow(row: number, from: WordScores, fromRow: number): void {
    const base = fromRow * from.width;
    const n = from.orderLength[fromRow] ?? 0;
    for (let k = 0; k < n; k++) {
      const word = from.order[base + k] ?? 0;
      const at = row * this.width + word;
      const old = this.scores[at] ?? 0;
      if (old === 0) this.note(row, word);
      this.scores[at] = Math.max(old, from.scores[base + word] ?? 0);
    }
    this.members?.push(row, fromRow);
  }

  /** BM25+ of the row (as MiniSearch's, but see wordWeights in memory-search.ts): the sum of its scores times the weights of the words matched. */
  bm25(row: number, weights: Float64Array): number {
    const base = row * this.width;
    const n = this.orderLength[row] ?? 0;
    let sum = 0;
    let matched = 0;
    for (let k = 0; k < n; k++) {
      const word = this.order[base + k] ?? 0;
      sum += this.scores[base + word] ?? 0;
      matched += weights[word] ?? 1;
    }
    return sum * matched;
  }

  /** The row's scores by word, in the order first scored. */
  perTerm(row: number, words: readonly string[]): Map<string, number> {
    const out = new Map<string, number>();
    this.forEachWord(row, (word, score) => out.set(words[word] ?? '', score));
    return out;
  }

  /** The member rows of a group row, in the order added (undefined when the table keeps none). */
  membersOf(row: number): number[] | undefined {
    return this.members?.of(row);
  }

  private forEachWord(row: number, f: (word: number, score: number) => void): void {
    const base = row * this.width;
    const n = this.orderLength[row] ?? 0;
    for (let k = 0; k < n; k++) {
      const word = this.order[base + k] ?? 0;
      f(word, this.scores[base + word] ?? 0);
    }
  }

  private note(row: number, word: number): void {
    const n = this.orderLength[row] ?? 0;
    this.order[row * this.width + n] = word;
    this.orderLength[row] = n + 1;
  }

  private grow(): void {
    const capacity = this.segments.length * 2;
    this.segments = grown(this.segments, new Int32Array(capacity));
    this.docs = grown(this.docs, new Int32Array(capacity));
    this.scores = grown(this.scores, new Float64Array(capacity * this.width));
    this.order = grown(this.order, new Uint16Array(capacity * this.width));
    this.orderLength = grown(this.orderLength, new Uint16Array(capacity));
  }
}

function grown<T extends Int32Array | Float64Array | Uint16Array>(from: T, to: T): T {
  to.set(from as never);
  return to;
}

/** Each group row's members as a singly linked list in typed arrays, appended at the tail. */
class Members {
  private head: Int32Array;
  private tail: Int32Array;
  private next = new Int32Array(256);
  private row = new Int32Array(256);
  private size = 0;

  constructor(capacity: number) {
    this.head = new Int32Array(capacity).fill(-1);
    this.tail = new Int32Array(capacity).fill(-1);
  }

  push(group: number, member: number): void {
    if (group >= this.head.length) this.growGroups(group);
    if (this.size === this.next.length) {
      this.next = grown(this.next, new Int32Array(this.size * 2));
      this.row = grown(this.row, new Int32Array(this.size * 2));
    }
    const e = this.size++;
    this.row[e] = member;
    this.next[e] = -1;
    const last = this.tail[group] ?? -1;
    if (last < 0) this.head[group] = e;
    else this.next[last] = e;
    this.tail[group] = e;
  }

  of(group: number): number[] {
    const out: number[] = [];
    for (let e = group < this.head.length ? (this.head[group] ?? -1) : -1; e >= 0; e = this.next[e] ?? -1) out.push(this.row[e] ?? 0);
    return out;
  }

  private growGroups(group: number): void {
    const capacity = Math.max(group + 1, this.head.length * 2);
    const head = new Int32Array(capacity).fill(-1);
    const tail = new Int32Array(capacity).fill(-1);
    head.set(this.head);
    tail.set(this.tail);
    this.head = head;
    this.tail = tail;
  }
}

/**
 * The positions of the `limit` highest values, highest first, ties in position order: what a
 * stable sort by value, cut at `limit`, keeps — found with a heap of `limit` positions rather
 * than a sort of every value.
 */
export function topPositions(values: Float64Array, limit: number): number[] {
  const heap = new PositionHeap(values, Math.max(0, limit));
  for (let i = 0; i < values.length; i++) heap.offer(i);
  return heap.positions().sort((a, b) => (values[b] ?? 0) - (values[a] ?? 0) || a - b);
}

/** The `limit` best positions offered so far, the worst at the root (lowest value; of equal values, the latest position). */
class PositionHeap {
  private readonly heap: Int32Array;
  private size = 0;

  constructor(
    private readonly values: Float64Array,
    private readonly limit: number,
  ) {
    this.heap = new Int32Array(limit);
  }

  /** Offers positions in increasing order: a later position with an equal value never displaces an earlier one. */
  offer(position: number): void {
    if (this.size < this.limit) {
      this.heap[this.size] = position;
      this.up(this.size++);
    } else if (this.limit > 0 && (this.values[position] ?? 0) > (this.values[this.heap[0] ?? 0] ?? 0)) {
      this.heap[0] = position;
      this.down(0);
    }
  }

  positions(): number[] {
    return [...this.heap.subarray(0, this.size)];
  }

  /** Whether the position at heap slot a is worse than at slot b. */
  private worse(a: number, b: number): boolean {
    const pa = this.heap[a] ?? 0;
    const pb = this.heap[b] ?? 0;
    const va = this.values[pa] ?? 0;
    const vb = this.values[pb] ?? 0;
    return va < vb || (va === vb && pa > pb);
  }

  private swap(a: number, b: number): void {
    const t = this.heap[a] ?? 0;
    this.heap[a] = this.heap[b] ?? 0;
    this.heap[b] = t;
  }

  private up(slot: number): void {
    for (let i = slot; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!this.worse(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(slot: number): void {
    for (let i = slot; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < this.size && this.worse(l, worst)) worst = l;
      if (r < this.size && this.worse(r, worst)) worst = r;
      if (worst === i) return;
      this.swap(i, worst);
      i = worst;
    }
  }
}
