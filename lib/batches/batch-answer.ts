/**
 * The batch reflector's output contract (req R-LLM) and its code-enforced hard caps.
 * The same zod schema generates the tool input schema the model is forced to fill.
 */
import * as z from 'zod';
import { type EmotionState, EmotionStateSchema, readEmotionState } from './emotion-state.js';
import { modelSchemaOf } from '../model/model-schema.js';
import { answerValueOf } from '../model/model-answer.js';

const SourceTurns = z.array(z.number().int().min(1)).min(1).max(20);
/** A path relative to the user's Knowledge/ folder, e.g. `Facts/reef_tank.md`. */
const KnowledgePath = z.string().min(1).max(300);

export const NewFactSchema = z.object({
  title: z.string().min(1).max(120).describe('slug_friendly_title'),
  content: z.string().min(1).max(2000).describe('the fact, 2-5 sentences'),
  source_turns: SourceTurns,
  related_existing: z.array(KnowledgePath).max(10).default([]),
  category: z.enum(['Facts', 'Concepts', 'Patterns']),
});
export const CorrectionSchema = z.object({
  existing_file: KnowledgePath,
  what_changed: z.string().min(1).max(2000),
  source_turns: SourceTurns,
  new_confidence_hint: z.enum(['higher', 'lower', 'same']),
});
export const ConnectionSchema = z.object({
  file_a: KnowledgePath,
  file_b: KnowledgePath,
  relationship: z.string().min(1).max(1000),
  source_turns: SourceTurns,
});
export const OpenQuestionSchema = z.object({
  question: z.string().min(1).max(1000),
  source_turns: SourceTurns,
  why_unresolved: z.string().max(1000).default(''),
});

export const BatchAnswerSchema = z.object({
  new_facts: z.array(NewFactSchema).default([]),
  corrections: z.array(CorrectionSchema).default([]),
  connections: z.array(ConnectionSchema).default([]),
  open_questions: z.array(OpenQuestionSchema).default([]),
});
export type BatchAnswer = z.infer<typeof BatchAnswerSchema>;
export type NewFact = z.infer<typeof NewFactSchema>;
export type Correction = z.infer<typeof CorrectionSchema>;
export type Connection = z.infer<typeof ConnectionSchema>;
export type OpenQuestion = z.infer<typeof OpenQuestionSchema>;

/** Hard caps of req R-LLM-3: excess items are truncated after the model returns. */
export const HARD_CAPS = { new_facts: 2, corrections: 1, connections: 2, open_questions: 2 } as const;
export type ItemCategory = keyof typeof HARD_CAPS;

/** What the model fills in: the items, and optionally its assessment (req R-EVT-4's emotion state). */
export const ReflectionToolSchema = BatchAnswerSchema.extend({
  assessment: EmotionStateSchema.optional().describe('where you stand after these turns (optional)'),
});

/**
 * Req R-EVT-3's structured reflection (trigger, insight, recommendation, confidence): what
 * an event taught the agent about how to act. Asked for only when an agent.event fired the
 * batch (the trigger is the event's kind), so other batches' tool schema stays as small.
 */
export const ReflectionEntrySchema = z.object({
  insight: z.string().min(1).max(600).describe('what these turns teach about how the agent should act'),
  recommendation: z.string().min(1).max(600).describe('what the agent should do differently from now on'),
  confidence: z.number().min(0).max(1).describe('your confidence in the insight, 0..1'),
});
export type ReflectionEntry = z.infer<typeof ReflectionEntrySchema>;

export const ReflectionToolWithEntrySchema = ReflectionToolSchema.extend({
  reflection: ReflectionEntrySchema.optional().describe('your reflection on the event (see "Your reflection")'),
});
export type ReflectionAnswer = z.input<typeof ReflectionToolWithEntrySchema>;

/** JSON Schema of the answer, for the forced tool's input schema (its shape: model-schema.ts); with the reflection entry for an event's batch. */
export function reflectionToolInputSchema(withEntry = false): Record<string, unknown> {
  return modelSchemaOf(withEntry ? ReflectionToolWithEntrySchema : ReflectionToolSchema);
}

/** The reflection entry in a model's answer: absent, valid, or malformed (dropped, like a malformed assessment). */
function readReflectionEntry(raw: unknown): ReflectionEntry | null {
  const parsed = ReflectionEntrySchema.safeParse(raw);
  return parsed.success ? { ...parsed.data, confidence: Math.round(parsed.data.confidence * 100) / 100 } : null;
}

export class BatchAnswerError extends Error {
  constructor(
    message: string,
    readonly raw: string,
  ) {
    super(message);
    this.name = 'BatchAnswerError';
  }
}

/**
 * Validate what the model returned (already-parsed tool input, or text holding JSON)
 * and apply the hard caps. Throws BatchAnswerError, naming the failing fields.
 */
export function parseBatchAnswer(raw: unknown): {
  output: BatchAnswer;
  truncated: Record<ItemCategory, number>;
  /** The model's assessment, null when absent or malformed (`assessmentInvalid`). */
  assessment: EmotionState | null;
  assessmentInvalid: boolean;
  /** The model's reflection entry, null when absent or malformed. */
  entry: ReflectionEntry | null;
} {
  const rawText = typeof raw === 'string' ? raw : rawTextOf(raw);
  // As real models write it: in prose or a fence, trailing commas, enums in another case, extra fields (model-answer.ts).
  const value = answerValueOf(raw, ReflectionToolWithEntrySchema);
  if (value === undefined) throw new BatchAnswerError('model output holds no JSON object', rawText);
  const parsed = BatchAnswerSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new BatchAnswerError(`model output does not match the reflection schema: ${issues}`, rawText);
  }
  const output = parsed.data;
  const truncated = { new_facts: 0, corrections: 0, connections: 0, open_questions: 0 };
  for (const key of Object.keys(HARD_CAPS) as ItemCategory[]) {
    const items = output[key] as unknown[];
    truncated[key] = Math.max(0, items.length - HARD_CAPS[key]);
    items.length = Math.min(items.length, HARD_CAPS[key]);
  }
  const extras =
    typeof value === 'object' && value !== null ? (value as { assessment?: unknown; reflection?: unknown }) : {};
  const assessment = readEmotionState(extras.assessment);
  return {
    output,
    truncated,
    assessment: assessment.state,
    assessmentInvalid: assessment.invalid,
    entry: readReflectionEntry(extras.reflection),
  };
}

/**
 * The model's answer as text for the batch log. An answer nested too deeply for
 * JSON.stringify (a prompt injection can ask for thousands of levels) must still end as an
 * aborted batch with a reason, not as a RangeError that fails the job on every delivery.
 */
function rawTextOf(raw: unknown): string {
  try {
    return JSON.stringify(raw) ?? String(raw);
  } catch (error) {
    return `(model output that cannot be written as JSON: ${(error as Error).message})`;
  }
}
