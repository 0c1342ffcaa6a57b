/**
 * Who gets a sleep-time reflection (req R-SLP-1 to R-SLP-8): users with at least N messages in
 * the look-back window, from the activity index (users found by their activity markers of
 * the window's days — no scan — and counted by the per-day counts of their signal state),
 * minus those reflected within the window.
 */

/** UTC days (YYYY-MM-DD) the window (now − hours, now] touches, oldest first. */
export function windowDays(now: Date, lookbackHours: number): string[] {
  const days: string[] = [];
  const start = new Date(now.getTime() - lookbackHours * 3_600_000);
  for (
    let d = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate()));
    d <= now;
    d = new Date(d.getTime() + 86_400_000)
  ) {
    days.push(d.toISOString().slice(0, 10));
  }
  return days;
}

export interface ActiveUser {
  userId: string;
  activity: Record<string, number>;
}

export type Selection = {
  selected: Array<{ userId: string; messages: number }>;
  skipped: Array<{ userId: string; messages: number; reason: 'too_few_messages' | 'already_reflected' }>;
};

/**
 * `candidates`: users active on a day of the window (the activity index's partitions for
 * those days). `lastRun(userId)`: when the user's last run of this kind
 * started, or null. Messages are counted per day, so the window is counted in whole days.
 */
export function selectUsers(
  candidates: readonly ActiveUser[],
  days: readonly string[],
  minMessages: number,
  lastRun: (userId: string) => string | null,
  now: Date,
  lookbackHours: number,
): Selection {
  const out: Selection = { selected: [], skipped: [] };
  const seen = new Set<string>();
  const windowStart = now.getTime() - lookbackHours * 3_600_000;
  for (const u of candidates) {
    if (seen.has(u.userId)) continue;
    seen.add(u.userId);
    const messages = days.reduce((n, d) => n + (u.activity[d] ?? 0), 0);
    if (messages < minMessages) {
      out.skipped.push({ userId: u.userId, messages, reason: 'too_few_messages' });
      continue;
    }
    const ran = lastRun(u.userId);
    if (ran && Date.parse(ran) > windowStart) {
      out.skipped.push({ userId: u.userId, messages, reason: 'already_reflected' });
      continue;
    }
    out.selected.push({ userId: u.userId, messages });
  }
  return out;
}
