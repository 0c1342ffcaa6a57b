/** One turn.saved event as a JSONL line, for benchmarks that write their own turns. */
export const turnLine = (
  userId: string,
  turnId: number,
  fields: { query: string; response: string; at: Date } & Record<string, unknown>,
): string => {
  const { at, ...rest } = fields;
  return JSON.stringify({
    type: 'turn.saved',
    version: 1,
    userId,
    sessionId: 's1',
    turnId,
    timestamp: at.toISOString(),
    ...rest,
  });
};
