/** The batch log of req R-LOG: one JSON record per batch, everything a reviewer needs. */
import type { EmotionState } from './emotion-state.js';
import type { Rejection } from './quality-gates.js';
import type { ItemCategory } from './batch-answer.js';

export interface ModelUsage {
  modelId: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  /** True when the output was reused from an earlier delivery of the same job (no model call). */
  reused: boolean;
  /** From the price table in sleep-time/model-prices.ts; null for an unknown model id. */
  estimatedCostUsd?: number | null;
  /**
   * Why the model stopped (Converse `stopReason`: end_turn, tool_use, max_tokens,
   * malformed_tool_use, …); absent in outputs recorded before it was read.
   */
  stopReason?: string;
  /**
   * The answer was cut at its output budget (`max_tokens`) and asked again with a larger one
   * in the same delivery: the first call's budget, the larger one, and the tokens the first
   * call used (counted in the cost).
   */
  budgetRetry?: { maxTokens: number; retryMaxTokens: number; inputTokens: number; outputTokens: number };
  /** Answered by a Bedrock batch inference job (lib/batch-inference): billed at the batch price. */
  batchInference?: true;
}

export interface BatchLog {
  batch_id: string;
  user_id: string;
  status: 'completed' | 'aborted';
  /** When the batch ran (processing time). */
  timestamp: string;
  /** The batch's input time: its last turn's timestamp. Absent from logs written before it. */
  input_at?: string;
  turns_reviewed: number[];
  turns_missing: number[];
  turns_omitted_for_budget: number[];
  trigger: string;
  kind: string;
  urgency_score: number;
  quality_gate_results: {
    items_proposed: number;
    items_passed: number;
    truncated_by_caps: Record<ItemCategory, number>;
    rejections: Rejection[];
  };
  staged_files: string[];
  promoted_files: string[];
  /** Episode documents (req R-EPI) of the reviewed turns, written by this batch. */
  episodes?: string[];
  /** Knowledge facts (paths) this batch saw again (its dedup gate found them): verified at its last turn's time, unless verified later already. */
  verified?: string[];
  /** Relation-graph edges (ids) this batch's connections added or reinforced (on this delivery or an earlier one: a redelivery logs the same). */
  edges?: string[];
  /** Short-term tier entries (`mem:` ids, req R-TIER-11) this batch's staged and recurring items wrote or saw again. */
  /** Knowledge facts the batch's staged corrections contradicted (req R-TIER-8), `Knowledge/…`. */
  contradicted?: string[];
  tier_entries?: string[];
  /**
   * An agent.event's batch with no turn to review (req R-EVT-1: lib/batches/event-reflection.ts):
   * why it had none, what it reflected on instead (the event's detail, its episodes), and, when
   * that was nothing, why no model was asked.
   */
  event_only?: { reason: string; material: Array<'detail' | 'episodes'>; not_reflected?: string };
  /** The selective diary's decision (req R-DIARY): the entry written, or why not. */
  diary?: { written: boolean; path?: string; criteria: Record<string, string[]>; reason?: string };
  /** Outputs that recurred in an earlier batch's staged item: each gave it a promotion instead of being staged again. */
  reinforced: Array<{ item: string; staged_file: string; similarity: number; promotion_count: number }>;
  model: ModelUsage | null;
  /** The model's assessment after the batch (req R-EVT-4 emotion state), when it gave a valid one. */
  assessment?: EmotionState | null;
  error: { message: string; raw?: string } | null;
  duration_ms: number;
}
