/** By name, so it holds whichever copy of the SDK threw it. */
export const isConditionalCheckFailure = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/**
 * A TransactWriteItems cancelled because a condition failed or another transaction held one
 * of its items (TransactionConflict): the caller reads again and decides again
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
 */
export function isCancelledByCondition(error: unknown): boolean {
  return (cancellationCodes(error) ?? []).some(
    (code) => code === 'ConditionalCheckFailed' || code === 'TransactionConflict',
  );
}

/**
 * A cancelled TransactWriteItems' reason codes, one per action in the request's order (none:
 * no error for that action), or null for any other error
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_CancellationReason.html).
 */
export function cancellationCodes(error: unknown): Array<string | undefined> | null {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return null;
  return ((error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? []).map((r) => r.Code);
}
