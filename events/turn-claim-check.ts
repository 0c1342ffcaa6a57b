import * as z from 'zod';
import { TurnSavedSchema } from './turn-saved.js';

/**
 * A `turn.saved` too large for SQS travels as a claim check: the routing fields plus
 * `payloadRef`, the S3 key (in the memory bucket) of the full event's JSON. The publisher
 * client does this by itself; the signal function fetches the event and validates it
 * like any other.
 */
export const TurnClaimCheckSchema = TurnSavedSchema.pick({
  type: true,
  version: true,
  userId: true,
  sessionId: true,
  turnId: true,
  timestamp: true,
}).extend({
  payloadRef: z.object({
    /** Key under `claims/{userId}/` in the memory bucket. */
    key: z.string().min(1).max(1024),
    bytes: z.number().int().min(0),
  }),
});
export type TurnClaimCheck = z.infer<typeof TurnClaimCheckSchema>;

/** SQS accepts 1 MiB, but bills every 64 KiB chunk as one request; above this we send a claim check. */
export const CLAIM_CHECK_THRESHOLD_BYTES = 256 * 1024;
