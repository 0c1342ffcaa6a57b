/** By name, so it holds whichever copy of the SDK threw it. */
export const isConditionalCheckFailure = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';
