/**
 * The time a query asks about, when it names one ("on 3 June, 2023", "in January 2022",
 * "between August 11 and August 15 2023", "yesterday", "two weeks ago"): a window of epoch ms,
 * read by chrono (chrono-node, its English parser) relative to the search's `now`. The
 * "time" lever: memory.search ranks the items written in that window apart (time-ranking.ts).
 */
import type { ParsedComponents } from 'chrono-node';
import { parse } from 'chrono-node/en';

export interface TimeWindow {
  /** Epoch ms, inclusive. */
  from: number;
  /** Epoch ms, exclusive. */
  to: number;
}

const DAY = 86_400_000;

/** A named day is widened by a day either side: the query's and the memory's time zones may differ. */
const DAY_SLACK = DAY;

/** The window a parsed date names: its day (a weekday names one), or its month, or its year — the finest unit it is certain of. */
function windowOf(c: ParsedComponents): TimeWindow {
  const at = c.date();
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  if (c.isCertain('day') || c.isCertain('weekday')) {
    const day = Date.UTC(y, m, at.getUTCDate());
    return { from: day - DAY_SLACK, to: day + DAY + DAY_SLACK };
  }
  if (c.isCertain('month')) return { from: Date.UTC(y, m, 1), to: Date.UTC(y, m + 1, 1) };
  return { from: Date.UTC(y, 0, 1), to: Date.UTC(y + 1, 0, 1) };
}

/**
 * A window that lies after `now` was meant in the past: a weekday alone ("on Monday") a week
 * earlier, a month or day without a year ("in May", asked in March) a year earlier.
 */
function past(w: TimeWindow, c: ParsedComponents, now: number): TimeWindow {
  if (c.date().getTime() <= now || c.isCertain('year')) return w;
  if (!c.isCertain('day') && !c.isCertain('month')) return { from: w.from - 7 * DAY, to: w.to - 7 * DAY };
  const back = (t: number) => {
    const d = new Date(t);
    return Date.UTC(d.getUTCFullYear() - 1, d.getUTCMonth(), d.getUTCDate());
  };
  return { from: back(w.from), to: back(w.to) };
}

/**
 * Whether a date chrono found names a time memory can rank by: it is certain of a day, a
 * weekday, a month or a year (a time of day alone is not), and it is not a lone lower-case
 * word that is a word before it is a date ("march", "sun", "may"); "yesterday" names a day.
 */
const namesATime = (text: string, c: ParsedComponents): boolean =>
  (c.isCertain('day') || c.isCertain('weekday') || c.isCertain('month') || c.isCertain('year')) &&
  (!/^[a-z]+$/.test(text) || c.isCertain('day'));

/**
 * The window the query names, or null when it names no time. Several dates ("between … and …")
 * span from the earliest's start to the latest's end. Read in UTC, as Lambda's clock is.
 */
export function queryTimeWindow(query: string, now: Date): TimeWindow | null {
  const found = parse(query, { instant: now, timezone: 'UTC' })
    .filter((r) => namesATime(r.text, r.start))
    .flatMap((r) => [r.start, ...(r.end ? [r.end] : [])]);
  if (found.length === 0) return null;
  const windows = found.map((c) => past(windowOf(c), c, now.getTime()));
  return { from: Math.min(...windows.map((w) => w.from)), to: Math.max(...windows.map((w) => w.to)) };
}
