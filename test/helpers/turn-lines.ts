/** turn.saved events as JSONL lines, for replays through the local harness. */

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
