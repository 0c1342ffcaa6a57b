/**
 * A diary entry written by hand (seed 004 M3: "manual diary commands always create entries"):
 * the selective diary's criteria do not decide it — its `user_signal` is the request itself.
 * It sits after the user's latest turn among the batches' entries (keys.diarySk orders by the
 * id's last number). Pure.
 */
import { createHash } from 'node:crypto';
import type { DiaryRecord } from './diary.js';

export interface ManualEntryInput {
  userId: string;
  actor: string;
  text: string;
  /** Turns the entry is about (none: the entry stands alone). */
  turns: readonly number[];
  /** The user's latest turn when it was written: where the entry sits in the diary. */
  lastTurnId: number;
  at: Date;
}

/** The same words after the same turn are one entry: a retried request writes it once. */
export function manualDiaryId(text: string, lastTurnId: number): string {
  const digest = createHash('sha256').update(text.trim()).digest('hex').slice(0, 12);
  return `manual-${digest}-${lastTurnId}`;
}

export function manualDiaryRecord(input: ManualEntryInput): DiaryRecord {
  const text = input.text.trim();
  return {
    userId: input.userId,
    id: manualDiaryId(text, input.lastTurnId),
    at: input.at.toISOString(),
    trigger: 'manual',
    type: 'observation',
    written: true,
    criteria: { impact: [], reusable: [], lesson: [], user_signal: [`written by hand by ${input.actor}`] },
    turns: [...input.turns],
    text,
  };
}
