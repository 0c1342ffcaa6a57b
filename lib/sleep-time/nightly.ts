/**
 * Nightly reflection (req R-SLP-1 to R-SLP-8): a deep pass over a user's messages of the last
 * day, looking for six kinds of finding, each tagged HIGH / MEDIUM / LOW, gated in code,
 * chunked by token budget and merged with deduplication.
 */
import * as z from 'zod';
import type { TurnSaved } from '../../events/turn-saved.js';
import { knownLine, renderTurns } from '../batches/batch-assembly.js';
import { callCeiling } from '../model/bedrock-models.js';
import { renderFrontMatter } from '../kernel/front-matter.js';
import { KnowledgeSearch } from '../knowledge/knowledge-search.js';
import type { KnowledgeDoc } from '../knowledge/knowledge.js';
import { summarise } from '../knowledge/knowledge.js';
import { estimateTokens, slugify } from '../kernel/text.js';

export const FindingCategorySchema = z.enum([
  'pattern',
  'contradiction',
  'correction',
  'preference',
  'relationship',
  'unresolved',
]);
export type FindingCategory = z.infer<typeof FindingCategorySchema>;
export const ConfidenceTagSchema = z.enum(['HIGH', 'MEDIUM', 'LOW']);

export const FindingSchema = z.object({
  category: FindingCategorySchema,
  confidence: ConfidenceTagSchema,
  /** The finding in one or two sentences. */
  statement: z.string().min(1).max(1000),
  /** Turns that show it; for patterns and preferences, one per instance. */
  evidence_turns: z.array(z.number().int().min(1)).min(1).max(50),
  /** Contradictions: both sides, each citing where it comes from. */
  sides: z.array(z.string().min(1).max(500)).max(2).optional(),
  /** Corrections: WRONG → RIGHT. */
  wrong: z.string().max(500).optional(),
  right: z.string().max(500).optional(),
  /** Relationships: a (subject, relationship, object) triple. */
  subject: z.string().max(200).optional(),
  relationship: z.string().max(200).optional(),
  object: z.string().max(200).optional(),
});
export type Finding = z.infer<typeof FindingSchema>;
export const NightlyOutputSchema = z.object({ findings: z.array(FindingSchema).max(30).default([]) });
export type NightlyOutput = z.infer<typeof NightlyOutputSchema>;

export const NIGHTLY_TOOL = {
  name: 'record_nightly_findings',
  description: 'Record the findings of the nightly reflection.',
};

/** The nightly run's instructions (req R-SLP-2's six kinds with their evidence rules, R-SLP-3's tags, R-SLP-5's memories); billed on every chunk, so kept short. */
export const NIGHTLY_SYSTEM_PROMPT = `You are the nightly reflection of an AI agent's long-term memory. Find in the user's recent
messages what real-time extraction misses; each finding is one of:
pattern: a recurring theme or evolving opinion (2+ instances, cite each turn);
contradiction: conflicts with a known fact (sides: both, cited);
correction: wrong information later corrected (wrong, right);
preference: undeclared but consistent (3+ instances, cite each);
relationship: subject, relationship, object;
unresolved: a question never answered.
Tag each HIGH, MEDIUM or LOW. Cite evidence_turns by turn number; a summary stands for the
turns in its heading. Known memories are listed to spot contradictions.`;

export function nightlyPrompt(chunk: string, memories: ReadonlyArray<{ path: string; summary: string }>): string {
  const known = memories.length === 0 ? '(none yet)' : memories.map((m) => knownLine(m)).join('\n');
  return `## Existing knowledge\n${known}\n\n## Messages to reflect on\n${chunk}\n`;
}

/** Known memories a nightly prompt lists at most, and the longest a path or summary is shown. */
export const NIGHTLY_MEMORIES = 10;
const WORST_MEMORIES = Array.from({ length: NIGHTLY_MEMORIES }, (_, i) => ({
  path: `Reflections/relationship/${'x'.repeat(100)}${i}.md`,
  summary: 's'.repeat(200),
}));

/**
 * The most tokens one nightly call over `chunk` can use, counted before it is made: the
 * request as sent with the most known memories it can list (system prompt, prompt, tool
 * definition, and the tool-use prompt Bedrock adds) plus `maxTokens` of answer, with
 * characters counted at 3.5 a token (Anthropic's figure for Claude, denser than
 * estimateTokens' 4, so the ceiling leans high; an estimate, not a tokenizer's count). A cut
 * answer asked again with a larger budget is not in it (rare; counted in the run's tokens
 * when it happens).
 */
export function nightlyCallCeiling(chunk: string, toolSchema: Record<string, unknown>, maxTokens: number): number {
  return callCeiling(
    {
      system: NIGHTLY_SYSTEM_PROMPT,
      prompt: nightlyPrompt(chunk, WORST_MEMORIES),
      tool: { ...NIGHTLY_TOOL, toolSchema },
    },
    maxTokens,
  );
}

/** A chunk of the day's messages: what the model reads, and the turns it holds (a summary's included). */
export interface TurnChunk {
  text: string;
  turns: TurnSaved[];
}

/** A context summary (req R-SUM) of the day, with the turns it summarised. */
export interface DaySummary {
  id: string;
  text: string;
  sourceTurns: readonly number[];
}

/** What a chunk is made of: a summary standing for turns, or one turn as it was said. */
type Unit = { summary: DaySummary; turns: TurnSaved[] } | { summary?: undefined; turns: [TurnSaved] };

/** A summary as the nightly prompt shows it: headed by the turns it stands for, which findings cite. */
export function renderSummary(summary: DaySummary, turns: readonly TurnSaved[]): string {
  const ids = turns.map((t) => t.turnId);
  return `### Summary of turns ${Math.min(...ids)}–${Math.max(...ids)}\n${summary.text}`;
}

/**
 * The day as the nightly reads it: a turn a summary covers is read through that
 * summary (the one covering most turns, when several do), once per summary — unless its batch aborted (`abandoned`: no batch will mine it, so
 * the nightly reads it as said); every other turn as it was said. A covered turn no batch has
 * taken yet is read through its summary too: the next batch mines it. Ordered by each unit's
 * first turn.
 */
export function dayUnits(
  turns: readonly TurnSaved[],
  summaries: readonly DaySummary[],
  abandoned: ReadonlySet<number>,
): Unit[] {
  const coveredBy = new Map<number, DaySummary>();
  // The summary standing for most turns claims them first: one that carried its session's
  // previous summary forward already says what that one said, which is then not read twice.
  const widest = [...summaries].sort((a, b) => b.sourceTurns.length - a.sourceTurns.length);
  for (const summary of widest)
    for (const id of summary.sourceTurns) if (!abandoned.has(id) && !coveredBy.has(id)) coveredBy.set(id, summary);
  const units: Unit[] = [];
  const bySummary = new Map<DaySummary, Unit>();
  for (const turn of [...turns].sort((a, b) => a.turnId - b.turnId)) {
    const summary = coveredBy.get(turn.turnId);
    if (!summary) {
      units.push({ turns: [turn] });
      continue;
    }
    const unit = bySummary.get(summary);
    if (unit) unit.turns.push(turn);
    else {
      const created: Unit = { summary, turns: [turn] };
      bySummary.set(summary, created);
      units.push(created);
    }
  }
  return units;
}

/** The text of a chunk's units: runs of turns rendered together (their group headings shared), summaries under their own. */
function renderUnits(units: readonly Unit[]): string {
  const parts: string[] = [];
  let run: TurnSaved[] = [];
  const flush = () => {
    if (run.length > 0) parts.push(renderTurns(run));
    run = [];
  };
  for (const unit of units) {
    if (unit.summary) {
      flush();
      parts.push(renderSummary(unit.summary, unit.turns));
    } else run.push(unit.turns[0]);
  }
  flush();
  return parts.join('\n\n');
}

const unitTokens = (unit: Unit) =>
  estimateTokens(unit.summary ? renderSummary(unit.summary, unit.turns) : renderTurns(unit.turns));

/** Split the day's units into chunks of at most `budgetTokens` (a unit larger than that is its own chunk). */
export function chunkDay(units: readonly Unit[], budgetTokens: number): TurnChunk[] {
  const chunks: TurnChunk[] = [];
  let current: Unit[] = [];
  let size = 0;
  const close = () => chunks.push({ text: renderUnits(current), turns: current.flatMap((u) => u.turns) });
  for (const unit of units) {
    // A unit's size as rendered alone (a turn's group heading included): a chunk's text is at most this sum.
    const tokens = unitTokens(unit);
    if (current.length > 0 && size + tokens > budgetTokens) {
      close();
      current = [];
      size = 0;
    }
    current.push(unit);
    size += tokens;
  }
  if (current.length > 0) close();
  return chunks;
}

/** Split turns (ascending) into chunks of at most `budgetTokens` (a turn larger than that is its own chunk). */
export function chunkTurnGroups(turns: readonly TurnSaved[], budgetTokens: number): TurnChunk[] {
  return chunkDay(dayUnits(turns, [], new Set()), budgetTokens);
}

/** The chunks' texts (see chunkTurnGroups). */
export function chunkTurns(turns: readonly TurnSaved[], budgetTokens: number): string[] {
  return chunkTurnGroups(turns, budgetTokens).map((c) => c.text);
}

/**
 * Which of `count` chunks a run reflects on when the cap (`maxNightlyChunks`) leaves some
 * out: `cap` of them spread evenly over the day, the first and the last included (one: the
 * newest). Spread rather than the newest: findings of one kind from different chunks merge
 * with their evidence united, so chunks from the whole day let a pattern that recurs
 * morning and evening show as one finding with both; the newest alone would see only the
 * day's last hours. Deterministic, so a redelivered job picks the same chunks (and reuses
 * their recorded answers).
 */
export function pickChunks(count: number, cap: number): number[] {
  if (count <= cap) return Array.from({ length: count }, (_, i) => i);
  if (cap <= 1) return [count - 1];
  return Array.from({ length: cap }, (_, i) => Math.round((i * (count - 1)) / (cap - 1)));
}

/**
 * The chunks a run reflects on within its token budget: at most `cap`, spread over the day
 * (pickChunks), whose ceilings together fit `budget`. A chunk whose ceiling alone is over the
 * budget (one huge turn) is never picked and does not keep the others out; among the rest,
 * the most chunks that fit, spread evenly.
 */
export function pickWithinBudget(ceilings: readonly number[], cap: number, budget: number): number[] {
  const fitting = ceilings.flatMap((c, i) => (c <= budget ? [i] : []));
  for (let n = Math.min(cap, fitting.length); n > 0; n--) {
    const picked = pickChunks(fitting.length, n).map((j) => fitting[j] as number);
    if (picked.reduce((sum, i) => sum + (ceilings[i] ?? 0), 0) <= budget) return picked;
  }
  return [];
}

/** What the chunks not picked hold: how many, their messages, and their turns as first–last ranges (adjacent chunks joined). */
export function leftOut(
  chunks: readonly TurnChunk[],
  picked: ReadonlySet<number>,
): { chunksSkipped: number; messagesNotReviewed: number; turnRanges: Array<[number, number]> } {
  const turnRanges: Array<[number, number]> = [];
  let chunksSkipped = 0;
  let messagesNotReviewed = 0;
  chunks.forEach((chunk, i) => {
    if (picked.has(i) || chunk.turns.length === 0) return;
    chunksSkipped += 1;
    messagesNotReviewed += chunk.turns.length;
    const first = chunk.turns[0]?.turnId ?? 0;
    const last = chunk.turns[chunk.turns.length - 1]?.turnId ?? first;
    const previous = turnRanges[turnRanges.length - 1];
    if (previous && i > 0 && !picked.has(i - 1)) previous[1] = last;
    else turnRanges.push([first, last]);
  });
  return { chunksSkipped, messagesNotReviewed, turnRanges };
}

const RANK = { HIGH: 3, MEDIUM: 2, LOW: 1 } as const;

/** Where the nightly run's findings live, under Knowledge/. */
const FINDINGS_FOLDER = 'Reflections/';

/** Findings of one category this similar are one finding (evidence and the higher confidence kept). */
export const MERGE_SIMILARITY = 0.8;

/** Merge the chunks' findings: same category and similar statement → one, evidence united. */
export function mergeFindings(findings: readonly Finding[]): Finding[] {
  const merged: Finding[] = [];
  for (const f of findings) {
    const index = new KnowledgeSearch(
      merged.map((m, i) => ({ id: String(i), title: '', text: m.statement, category: m.category })),
    );
    const same = index
      .similar(f.statement)
      .find((s) => s.doc.category === f.category && s.similarity > MERGE_SIMILARITY);
    const target = same ? merged[Number(same.doc.id)] : undefined;
    if (!target) {
      merged.push({ ...f, evidence_turns: [...new Set(f.evidence_turns)].sort((a, b) => a - b) });
      continue;
    }
    target.evidence_turns = [...new Set([...target.evidence_turns, ...f.evidence_turns])].sort((a, b) => a - b);
    if (RANK[f.confidence] > RANK[target.confidence]) target.confidence = f.confidence;
  }
  return merged;
}

/** Req R-SLP-2, R-SLP-3's confidence gating plus each category's own evidence rule; null when stored. */
export function gateFinding(f: Finding): string | null {
  if (f.category === 'preference' && f.confidence !== 'HIGH') return 'preferences are stored only at HIGH confidence';
  if (f.confidence === 'LOW') return 'LOW confidence findings are not stored';
  const instances = new Set(f.evidence_turns).size;
  if (f.category === 'pattern' && instances < 2) return 'a pattern needs at least 2 instances';
  if (f.category === 'preference' && instances < 3) return 'an implicit preference needs at least 3 instances';
  if (f.category === 'contradiction' && (f.sides?.length ?? 0) < 2) return 'a contradiction must cite both sides';
  if (f.category === 'correction' && !(f.wrong && f.right))
    return 'a correction must say what was wrong and what is right';
  if (f.category === 'relationship' && !(f.subject && f.relationship && f.object))
    return 'a relationship must be a (subject, relationship, object) triple';
  return null;
}

export const TAG_CONFIDENCE = { HIGH: 0.85, MEDIUM: 0.7, LOW: 0.5 } as const;

/** Whether a Knowledge document is a finding the nightly run `runId` stored. */
export const isFindingOf = (doc: KnowledgeDoc, runId: string): boolean => doc.storedBy === runId;

/** The Knowledge document a stored finding becomes, with its `[reflection:category]` source. */
export function findingDocument(
  f: Finding,
  runId: string,
  createdAt: string,
): { path: string; markdown: string; doc: KnowledgeDoc } {
  const title =
    f.category === 'relationship' && f.subject && f.relationship && f.object
      ? `${f.subject} ${f.relationship} ${f.object}`
      : f.statement;
  const path = `${FINDINGS_FOLDER}${f.category}/${slugify(title).slice(0, 60)}.md`;
  const lines = [f.statement];
  if (f.sides) lines.push('', ...f.sides.map((s, i) => `Side ${i + 1}: ${s}`));
  if (f.wrong && f.right) lines.push('', `WRONG → RIGHT: ${f.wrong} → ${f.right}`);
  if (f.subject && f.relationship && f.object) lines.push('', `(${f.subject}, ${f.relationship}, ${f.object})`);
  const text = lines.join('\n');
  const confidence = TAG_CONFIDENCE[f.confidence];
  const meta = {
    kind: 'finding',
    source: `[reflection:${f.category}]`,
    category: f.category,
    confidence_tag: f.confidence,
    confidence,
    run_id: runId,
    created_at: createdAt,
    source_turns: f.evidence_turns,
  };
  return {
    path,
    markdown: renderFrontMatter(meta, `# ${title}\n\n${text}`),
    doc: {
      id: path,
      title,
      text,
      category: `${FINDINGS_FOLDER}${f.category}`,
      confidence,
      sourceTurns: f.evidence_turns,
      summary: summarise(text),
      promotedAt: createdAt,
      storedBy: runId,
    },
  };
}
