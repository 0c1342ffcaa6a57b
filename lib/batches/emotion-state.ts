/**
 * Emotion state (req R-EVT-4): a reflection carries a small assessment of where the
 * agent stands after the reviewed turns — its confidence in its understanding (0..1), how
 * much caution the exchange calls for (0..1), and the user's sentiment (−1..1). It is the
 * model's judgement, optional in its answer, kept in the batch log and shown in the review
 * console. A malformed assessment is dropped, never a reason to abort the batch: the items
 * are what the batch is for.
 */
import * as z from 'zod';

export const EmotionStateSchema = z.object({
  confidence: z.number().min(0).max(1).describe('certainty in your understanding of the user, 0..1'),
  caution: z.number().min(0).max(1).describe('caution these turns call for (corrections, frustration, risk), 0..1'),
  sentiment: z.number().min(-1).max(1).describe("the user's mood, -1 negative … 1 positive"),
});
export type EmotionState = z.infer<typeof EmotionStateSchema>;

const round2 = (n: number) => Math.round(n * 100) / 100;

/** The assessment in a model's answer: absent, valid (rounded to 2 decimals) or invalid (dropped). */
export function readEmotionState(raw: unknown): { state: EmotionState | null; invalid: boolean } {
  if (raw === undefined || raw === null) return { state: null, invalid: false };
  const parsed = EmotionStateSchema.safeParse(raw);
  if (!parsed.success) return { state: null, invalid: true };
  const { confidence, caution, sentiment } = parsed.data;
  return {
    state: { confidence: round2(confidence), caution: round2(caution), sentiment: round2(sentiment) },
    invalid: false,
  };
}
