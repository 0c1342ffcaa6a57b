/**
 * The search index that lives between requests: per owner (a user, and GLOBAL),
 * segments written by compactions plus the items changed since, read in full only by a cold
 * container.
 *
 * A search reads the owner's change marks and pointer (two small consistent reads), and the
 * user's turns above the pointer's turn watermark (the turn index is their change log: the
 * signal function marks only the turns at or below what its state counted), loads
 * the segments it has not seen (immutable, so a warm container keeps them), reads the items
 * whose marks it has not seen yet (`itemsById`: only those), and ranks over segments plus an
 * overlay segment of those items; an item a change shows deleted, expired or gone is removed
 * from the segments before it. The page's items are then read from their stores, so what a
 * search returns is what the stores hold now.
 *
 * A compaction folds the marked items into a new segment (a delta) and moves the pointer with a
 * condition on the version it read, its watermark with it: the marks below the watermark are
 * folded, and readers read only those from it on. No mark is deleted: the per-turn path's
 * expire by DynamoDB's TTL, the others are given one once folded. When
 * the deltas pile up (MAX_SEGMENTS) it merges them, and the base with them once they hold a
 * tenth of its items (or removals pass MAX_REMOVES), dropping superseded, removed and expired
 * items, without tokenising again (mergePlan). The reflector compacts a user after a job once
 * COMPACT_AFTER_JOB marks piled up and after every nightly and weekly run (one job at a time
 * per user: the FIFO group); the API compacts an owner whose marks passed COMPACT_AT (an owner
 * no job reaches: GLOBAL, API-only users). Two compactions of one owner at once write
 * segments under distinct keys, and only the one whose pointer move wins is kept.
 */
import { RecentCache } from '../kernel/recent-cache.js';
import { GLOBAL_USER, isLive, type MemoryItem } from '../items/memory-item.js';
import { type IndexEntry, segmentOf } from './search-segments.js';
import type { SearchSegment } from './search-segment.js';
import { deltaOf, keysOf, mergedSegment, mergePlan } from './compaction-segments.js';
import { SEARCH_MARK_TTL_MS } from '../kernel/memory-paths.js';
import {
  COMPACT_AT,
  COMPACT_TURNS_AT,
  MARK_LAG_MS,
  type MarkTiming,
  WATERMARK_REFRESH_MS,
} from './compaction-policy.js';
import type { Clock } from '../kernel/runtime.port.js';
import type { EmbeddingModel } from '../model/language-model.port.js';
import type {
  MemoryCatalog,
  SearchChange,
  SearchIndexHead,
  SearchIndexStore,
  SearchSegmentRef,
  TurnLog,
} from './search-index.port.js';
import type { CompactionResult, SearchIndexReader, SearchView } from './search-index-reader.js';
import {
  foldedAbove,
  nextTurnWatermark,
  unfolded,
  unmarked,
  watermarkAge,
  withIds,
  withTurns,
} from './search-changes.js';

/** Reads of the pointer before giving up on segments retired under the reader. */
const ATTEMPTS = 4;

interface Overlay {
  ats: Map<string, string>;
  items: Map<string, MemoryItem | null>;
  signature: string;
  entry: IndexEntry;
}

/**
 * Overlays a warm container keeps, by owner, least recently used first out: at most this many
 * owners, and at most CACHED_ITEMS changed items over all of them (an owner's overlay holds up
 * to COMPACT_AT items before the API compacts it).
 */
const CACHED_OWNERS = 256;
const CACHED_ITEMS = 8_192;

export class LiveSearchIndex implements SearchIndexReader {
  private readonly overlays = new RecentCache<string, Overlay>({
    max: CACHED_OWNERS,
    maxSize: CACHED_ITEMS,
    sizeOf: (o) => o.items.size,
  });

  /**
   * `embeddings` (a stage that embeds): each compaction stores the vectors of the items
   * it folds in its delta, merges carry them; the overlay's items (changed since) have none and
   * rank lexically only, so a search embeds only its query.
   */
  constructor(
    private readonly deps: {
      store: SearchIndexStore;
      catalog: MemoryCatalog;
      clock: Clock;
      embeddings?: EmbeddingModel | undefined;
      marks?: MarkTiming;
      turns?: TurnLog;
    },
  ) {}

  /** The marks' clock (their `at` is wall time, as DynamoSearchChangeLog writes it) and L. */
  private get timing(): Required<MarkTiming> {
    return { now: this.deps.marks?.now ?? (() => new Date()), lagMs: this.deps.marks?.lagMs ?? MARK_LAG_MS };
  }

  /** The embedding model the segments' vectors come from, if the stage embeds. */
  get embeddings(): EmbeddingModel | undefined {
    return this.deps.embeddings;
  }

  async view(userId: string): Promise<SearchView> {
    for (let attempt = 1; ; attempt++) {
      // Pointer first, then the marks from its watermark (search-index-store.ts says why), with the segments.
      // With them, the turns written without a mark: those above the turn watermark.
      const head = await this.deps.store.head(userId);
      const [read, segments, turns] = await Promise.all([
        this.deps.store.changes(userId, head.watermark),
        Promise.all(head.segments.map((ref) => this.deps.store.segment(ref))),
        this.unmarkedTurns(userId, head),
      ]);
      if (segments.some((s) => s === null)) {
        if (attempt >= ATTEMPTS)
          throw new Error(`the search index of ${userId} kept retiring its segments under ${attempt} reads`);
        continue;
      }
      const changes = withTurns(unfolded(head, read), turns.items);
      const overlay = await this.overlay(userId, changes, turns.items);
      const entries = head.segments.map((ref, i) => ({
        segment: segments[i] as SearchSegment,
        removes: keysOf(userId, ref.removes),
      }));
      const age = watermarkAge(head, this.timing.now());
      // A pointer without a turn watermark is given one by its next compaction.
      const due =
        changes.length >= COMPACT_AT ||
        turns.items.length >= COMPACT_TURNS_AT ||
        (head.version > 0 && (age > WATERMARK_REFRESH_MS || this.lacksTurnWatermark(userId, head)));
      return {
        entries: [...entries, overlay.entry],
        fresh: overlay.items,
        changes: changes.length,
        due,
        stale: head.watermark !== undefined && age > SEARCH_MARK_TTL_MS,
      };
    }
  }

  /**
   * The user's turns the marks do not stand for (none for GLOBAL, or without a turn log): those
   * above the pointer's turn watermark, or, for a pointer without one, from the first turn the
   * signal function may have written without a mark (its TURNLOG; none: every turn was marked).
   * `floor`: the turn id they are above (null: none read).
   */
  private async unmarkedTurns(
    userId: string,
    head: SearchIndexHead,
  ): Promise<{ floor: number | null; items: MemoryItem[] }> {
    const floor = await this.turnFloor(userId, head);
    return { floor, items: floor === null || !this.deps.turns ? [] : await this.deps.turns.turnsAfter(userId, floor) };
  }

  /** The turn id the turns the marks do not stand for are above: the turn watermark, or TURNLOG's start less one; null: none. */
  private async turnFloor(userId: string, head: SearchIndexHead): Promise<number | null> {
    const log = this.deps.turns;
    if (!log || userId === GLOBAL_USER) return null;
    if (head.turnWatermark !== undefined) return head.turnWatermark;
    const from = await log.unmarkedFrom(userId);
    return from === null ? null : from - 1;
  }

  private lacksTurnWatermark(userId: string, head: SearchIndexHead): boolean {
    return this.deps.turns !== undefined && userId !== GLOBAL_USER && head.turnWatermark === undefined;
  }

  /** The changed items as an index entry: read again only those whose mark is new (the turns read with the view are not read again). */
  private async overlay(
    userId: string,
    changes: readonly SearchChange[],
    turns: readonly MemoryItem[],
  ): Promise<Overlay> {
    const cached = this.overlays.get(userId);
    const stale = new Set(changes.filter((c) => cached?.ats.get(c.id) !== c.at).map((c) => c.id));
    const read = await this.itemsById(userId, [...stale], unmarked(turns, changes));
    const now = this.deps.clock.now();
    const items = new Map<string, MemoryItem | null>();
    for (const c of changes) {
      const item = stale.has(c.id) ? (read.get(c.id) ?? null) : (cached?.items.get(c.id) ?? null);
      items.set(c.id, item && isLive(item, now) ? item : null);
    }
    const signature = changes
      .map((c) => `${c.id}@${c.at}`)
      .sort()
      .join('\n');
    if (cached && cached.signature === signature && stale.size === 0) return cached;
    const live = [...items.values()].filter((i): i is MemoryItem => i !== null);
    const gone = [...items].filter(([, i]) => i === null).map(([id]) => id);
    const overlay = {
      ats: new Map(changes.map((c) => [c.id, c.at])),
      items,
      signature,
      entry: { segment: segmentOf(live), removes: keysOf(userId, gone) },
    };
    this.overlays.set(userId, overlay);
    return overlay;
  }

  /** These items by id: those in `known` (turns read whole with the view) as they are, the rest from their stores. */
  private async itemsById(
    userId: string,
    ids: readonly string[],
    known: readonly MemoryItem[],
  ): Promise<Map<string, MemoryItem>> {
    const have = new Map(known.map((i) => [i.id, i]));
    const rest = ids.filter((id) => !have.has(id));
    const read = rest.length > 0 ? await this.deps.catalog.itemsById(userId, rest) : new Map<string, MemoryItem>();
    for (const id of ids) {
      const item = have.get(id);
      if (item) read.set(id, item);
    }
    return read;
  }

  /**
   * The owner's pointer and changes as a compaction reads them: the signal state's highest
   * counted turn FIRST, then the marks and the turns above the turn watermark (the order the
   * turn watermark's safety rests on: docs/search-index.md, "Turns without marks").
   */
  private async compactionInput(userId: string, atLeast: number) {
    const [head, counted] = await Promise.all([
      this.deps.store.head(userId),
      this.deps.turns && userId !== GLOBAL_USER ? this.deps.turns.counted(userId) : null,
    ]);
    const [marked, floor] = await Promise.all([
      this.deps.store.changes(userId, head.watermark),
      this.turnFloor(userId, head),
    ]);
    const byMarks = unfolded(head, marked);
    // Turn ids rise by at least one a turn, so at most counted − floor turns wait: fewer than the
    // threshold asks for with the marks, and the turns (read whole) are not read.
    const waiting = floor === null ? 0 : Math.max(0, (counted ?? floor) - floor);
    const read = floor !== null && this.deps.turns && (atLeast <= 1 || byMarks.length + waiting >= atLeast);
    const turns = { floor, items: read && this.deps.turns ? await this.deps.turns.turnsAfter(userId, floor) : [] };
    const turnWatermark =
      this.lacksTurnWatermark(userId, head) || head.turnWatermark !== undefined
        ? nextTurnWatermark(turns, counted)
        : undefined;
    return { head, marked, turns, changes: withTurns(byMarks, turns.items), turnWatermark };
  }

  /**
   * Fold the owner's changes into its segments. `full`: rewrite the index as one segment.
   * `rebuild` (every item id the owner's stores hold, lib/search/search-rebuild.ts): one
   * segment of those items as their stores hold them now, the old segments dropped — what a
   * lost or expired change mark left out is back, and nothing the stores no longer hold stays.
   */
  async compact(
    userId: string,
    atLeast = 1,
    options: { full?: boolean; rebuild?: readonly string[]; signal?: AbortSignal | undefined } = {},
  ): Promise<CompactionResult> {
    const { store, clock } = this.deps;
    const { now: wallNow, lagMs } = this.timing;
    const started = wallNow();
    const rebuild = options.rebuild;
    const input = await this.compactionInput(userId, options.full || rebuild ? 1 : atLeast);
    const { head, marked, turns, turnWatermark } = input;
    const changes = rebuild ? withIds(input.changes, rebuild) : input.changes;
    // Below s − L no mark can still be in flight (MARK_LAG_MS); never backwards.
    const bound = new Date(started.getTime() - lagMs).toISOString();
    const watermark = head.watermark !== undefined && head.watermark > bound ? head.watermark : bound;
    const marks = {
      watermark,
      folded: foldedAbove(marked, watermark),
      ...(turnWatermark !== undefined ? { turnWatermark } : {}),
    };
    // A full rewrite has nothing to do once the index is one segment that removes nothing and no change waits.
    const whole = head.segments.length <= 1 && (head.segments[0]?.removes.length ?? 0) === 0;
    const idle = rebuild ? false : options.full ? changes.length === 0 && whole : changes.length < Math.max(1, atLeast);
    if (idle)
      return changes.length === 0
        ? this.refreshed(userId, head, marks, started)
        : { folded: 0, version: head.version, merged: false };
    const read = await this.itemsById(
      userId,
      changes.map((c) => c.id),
      unmarked(turns.items, changes),
    );
    const now = clock.now();
    const live = changes.flatMap((c) => {
      const item = read.get(c.id);
      return item && isLive(item, now) ? [item] : [];
    });
    const liveIds = new Set(live.map((i) => i.id));
    const gone = changes.filter((c) => !liveIds.has(c.id)).map((c) => c.id);
    // Embedded before anything is written: a model that fails leaves the marks for the next compaction.
    const delta = await deltaOf(this.deps.embeddings, live, options.signal);
    const version = head.version + 1;
    const plan = options.full || rebuild ? 'all' : mergePlan(head, delta.size, gone.length);
    const merging = plan === 'none' ? [] : plan === 'all' ? head.segments : head.segments.slice(1);
    const merged =
      plan === 'none' || rebuild
        ? { segment: delta, removes: rebuild ? [] : gone }
        : await mergedSegment(store, userId, merging, { segment: delta, removes: keysOf(userId, gone) }, now);
    const written = await store.putSegment(userId, version, merged.segment);
    const ref: SearchSegmentRef = {
      ...written,
      items: merged.segment.size,
      removes: plan === 'all' ? [] : merged.removes,
    };
    const next: SearchIndexHead = {
      version,
      segments: [...head.segments.filter((s) => !merging.includes(s)), ref],
      ...marks,
    };
    if (!(await store.moveHead(userId, head.version, next))) {
      await store.deleteSegments([written]);
      return { folded: 0, version: head.version, merged: false, lost: true };
    }
    // Marks at or above the watermark are read again until it passes them; `folded` tells them apart. Any without a TTL gets one.
    await store.expireChanges(userId, marked);
    // Retired only now: a reader that read the old pointer and misses a segment reads the pointer again.
    if (merging.length > 0) await store.deleteSegments(merging);
    return { folded: changes.length, version, merged: plan !== 'none' };
  }

  /**
   * No change waits from the watermark on: it may move up to s − L without a segment. Done
   * only once it is old (a pointer write every WATERMARK_REFRESH_MS at most), so that an owner
   * searched but not written keeps a watermark well within the marks' TTL.
   */
  private async refreshed(
    userId: string,
    head: SearchIndexHead,
    next: Pick<SearchIndexHead, 'watermark' | 'folded' | 'turnWatermark'>,
    started: Date,
  ): Promise<CompactionResult> {
    // A pointer without a turn watermark gets one at once (its readers read TURNLOG until then).
    const turnsDue = head.turnWatermark === undefined && next.turnWatermark !== undefined;
    const marksDue = watermarkAge(head, started) > WATERMARK_REFRESH_MS && next.watermark !== head.watermark;
    if (head.version === 0 || !(turnsDue || marksDue)) return { folded: 0, version: head.version, merged: false };
    const moved = await this.deps.store.moveHead(userId, head.version, { ...head, ...next, version: head.version + 1 });
    return moved
      ? { folded: 0, version: head.version + 1, merged: false }
      : { folded: 0, version: head.version, merged: false, lost: true };
  }
}
