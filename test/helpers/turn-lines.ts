/** turn.saved events as JSONL lines, for replays through the local harness. */
import { readFileSync } from 'node:fs';

const SAMPLE = new URL('../../events/samples/conversation.jsonl', import.meta.url);

/** The sample conversation's turns of the given days (their dates), once per user, each in a session of their own. */
export function sampleDays(days: readonly string[], users: readonly string[]): string[] {
  const lines = readFileSync(SAMPLE, 'utf8').split('\n').filter(Boolean);
  return lines
    .map((l) => JSON.parse(l) as { userId: string; sessionId: string; timestamp: string })
    .filter((t) => days.includes(t.timestamp.slice(0, 10)))
    .flatMap((t) => users.map((userId) => JSON.stringify({ ...t, userId, sessionId: `${userId}/${t.sessionId}` })));
}

/** One turn of session s1, a minute per turn id on 2026-02-06. */
export const turnLine = (userId: string, turnId: number, query: string): string =>
  JSON.stringify({
    type: 'turn.saved',
    version: 1,
    userId,
    sessionId: 's1',
    turnId,
    timestamp: `2026-02-06T14:${String(turnId).padStart(2, '0')}:00Z`,
    query,
    response: 'Tell me more.',
  });

/** Ten turns of one user: one fact, then filler; enough for one turn-count batch. */
export const tenTurns = (userId: string): string[] =>
  Array.from({ length: 10 }, (_, i) =>
    turnLine(userId, i + 1, i === 0 ? 'I adopted a beagle named Rex.' : `entry${i}`),
  );
