/** Confidence assignment of req R-GATE-7: from the number of source turns, never from the model. */
export interface SourceTurnQuality {
  validation?: string | undefined;
  quality?: number | undefined;
}

export function confidenceFor(sourceTurns: ReadonlyArray<SourceTurnQuality>): number {
  const n = sourceTurns.length;
  if (n <= 1) return 0.6;
  if (n === 2) return 0.75;
  const approved = sourceTurns.some((t) => t.validation === 'APPROVE' && (t.quality ?? 0) >= 0.8);
  return approved ? 0.85 : 0.75;
}
