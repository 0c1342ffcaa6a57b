/**
 * An owner's changes as a search index's pointer and change marks tell them: the marks its
 * segments do not hold yet, the turns above its turn watermark (the turn index is their change
 * log), the watermarks a compaction may move to, and how old a watermark is
 * (docs/search-index.md, "Turns without marks", "Liveness").
 */
import type { MemoryItem } from '../items/memory-item.js';
import type { SearchChange, SearchIndexHead } from './search-index.port.js';

/** Most marks a pointer lists as folded above its watermark (`folded`, ~35 bytes each). */
const FOLDED_MAX = 1_000;

/**
 * The turns read above the turn watermark as changes (`at` empty: a turn's item is put once and
 * never changed), besides the marks; a turn that has a mark too is its mark's change.
 */
export function withTurns(changes: readonly SearchChange[], turns: readonly MemoryItem[]): SearchChange[] {
  const marked = new Set(changes.map((c) => c.id));
  return [...changes, ...turns.filter((t) => !marked.has(t.id)).map((t) => ({ id: t.id, at: '' }))];
}

/** Every item of the owner as a change (`at` empty: read from its store now), besides the marks and turns read. */
export function withIds(changes: readonly SearchChange[], ids: readonly string[]): SearchChange[] {
  const known = new Set(changes.map((c) => c.id));
  return [...changes, ...[...new Set(ids)].filter((id) => !known.has(id)).map((id) => ({ id, at: '' }))];
}

/**
 * The turn watermark a compaction may set: max(floor, min(counted, highest turn read)), where
 * `counted` is the signal state's highest counted turn, read before the turns. A turn at or
 * below `counted` written without a mark was written before the state that counted past it
 * was put, so before that read, and the strongly consistent Query read it (docs/search-index.md,
 * "Turns without marks"). No floor (no turn watermark, no TURNLOG, read after the state: no
 * turn was written without a mark, and any later one is above `counted`): `counted`.
 */
export function nextTurnWatermark(
  turns: { floor: number | null; items: readonly MemoryItem[] },
  counted: number | null,
): number {
  if (turns.floor === null) return counted ?? 0;
  if (counted === null || turns.items.length === 0) return turns.floor;
  const highest = Math.max(...turns.items.flatMap((t) => t.sourceTurns));
  return Math.max(turns.floor, Math.min(counted, highest));
}

/**
 * The turns read whole with the view that no mark stands for. A marked one is read again from
 * its store through the catalog: a mark may be a change the turn item does not hold, its
 * trust (req R-SCOPE-2, an outcome's mark: docs/memory-api.md, "Trust").
 */
export function unmarked(turns: readonly MemoryItem[], changes: readonly SearchChange[]): MemoryItem[] {
  const marked = new Set(changes.filter((c) => c.at !== '').map((c) => c.id));
  return turns.filter((t) => !marked.has(t.id));
}

/** The changes whose newest mark the pointer's segments do not hold yet. */
export function unfolded(head: SearchIndexHead, changes: readonly SearchChange[]): SearchChange[] {
  if (!head.folded?.length) return [...changes];
  const folded = new Set(head.folded);
  return changes.filter((c) => !folded.has(c.at));
}

/**
 * The newest marks the new pointer's segments hold at or above its watermark (every change
 * read was folded, or was already). Past FOLDED_MAX none: the next compaction folds them again,
 * which is only work (the pointer is one item, read by every search).
 */
export function foldedAbove(changes: readonly SearchChange[], watermark: string): string[] {
  const above = changes.filter((c) => c.at >= watermark).map((c) => c.at);
  return above.length > FOLDED_MAX ? [] : above;
}

/** How old the pointer's watermark is (a pointer without one: as old as can be). */
export function watermarkAge(head: SearchIndexHead, now: Date): number {
  return head.watermark === undefined ? Number.POSITIVE_INFINITY : now.getTime() - Date.parse(head.watermark);
}
