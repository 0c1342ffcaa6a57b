/**
 * THE OFFLINE MODEL — a deterministic, rule-based reflector. It is not an LLM.
 * It stands in for Bedrock in local runs and tests, answering the reflector's prompt
 * in the req R-LLM schema from surface patterns in the user's messages:
 *  - people and pets ("my husband…", "my dog Rex…"), places ("I went to…"), jobs ("I work
 *    as…"), plans ("I'm going to…"), activities ("I just started…"), possessions and
 *    preferences ("I have…", "my X is…", "I love…");
 *  - corrections ("actually…", "no, I meant…");
 *  - topics the user returns to in 3+ turns;
 *  - questions of substance (3+ content words) the agent left unanswered (an uncertain
 *    reply, or one sharing no word with the question).
 * Limits: English only; first person only (what the user says of others is caught only
 * through "my …"); it reads sentences, not meaning, so sarcasm, negation ("I don't love…")
 * and hypotheticals come out as facts; its facts quote the user instead of paraphrasing;
 * it connects two files only when one turn shares words with both. Asked for a reflection
 * entry (an event's batch), it names the event, the turns' main words (the event's own, when
 * no turn was waiting) and the latest earlier entry it was shown.
 */
import type { ReflectionEntry, BatchAnswer } from '../batches/batch-answer.js';
import type { EmotionState } from '../batches/emotion-state.js';
import { contentWords, slugify, topKeywords } from '../kernel/text.js';

export const OFFLINE_MODEL_LABEL = 'offline model (rule-based reflector, not an LLM)';

export interface PromptTurn {
  turnId: number;
  user: string;
  agent: string;
}

/** Read the turns and existing knowledge back out of the reflector's prompt (see batch-assembly). */
export function parseReflectorPrompt(prompt: string): {
  turns: PromptTurn[];
  existing: Array<{ path: string; summary: string }>;
} {
  const turns: PromptTurn[] = [];
  // A turn line is `[Turn N] User: …` (batch-assembly's renderTurns); `[Turn N, HH:MM]` is read too.
  const blocks = prompt.split(/^\[Turn (?=\d+[,\]])/m).slice(1);
  for (const block of blocks) {
    const id = Number(/^(\d+)/.exec(block)?.[1]);
    const user = /^\d+(?:, [^\]]*)?\] User: ([\s\S]*?)(?=\nContext: |\nAgent: |$)/.exec(block)?.[1] ?? '';
    // The agent's reply runs to the next group heading (or the end).
    const agent = /\nAgent: ([\s\S]*?)(?=\n\n#{2,3} |$)/.exec(block)?.[1] ?? '';
    if (Number.isInteger(id)) turns.push({ turnId: id, user: user.trim(), agent: agent.trim() });
  }
  const existingSection = /## Existing knowledge\n([\s\S]*?)\n\n## /.exec(prompt)?.[1] ?? '';
  // `- path: summary`, or `- path` alone when the file's name already says it (its words stand for the summary).
  const existing = [...existingSection.matchAll(/^- ([^:\n]+?)(?:: (.*))?$/gm)].map((m) => ({
    path: m[1] ?? '',
    summary: m[2] ?? nameWords(m[1] ?? ''),
  }));
  return { turns, existing };
}

/** A file's name as words: `Reflections/pattern/the_user_likes_tea.md` → `the user likes tea`. */
const nameWords = (path: string): string => (path.split('/').pop() ?? '').replace(/\.md$/, '').replace(/[_-]+/g, ' ');

const sentences = (text: string): string[] =>
  text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

const SELF_STATEMENT = [
  {
    re: /\bmy ((?:husband|wife|partner|boyfriend|girlfriend|son|daughter|kids|children|mom|mother|dad|father|sister|brother|grandma|grandpa|friend|dog|cat|puppy|kitten|pet)s?)\b(?: named| called)? ?([A-Z][a-z]+)?/,
    kind: 'people',
  },
  {
    re: /\bI (?:went|traveled|travelled|moved|flew|drove) (?:to|back to) (?:the )?([\w\s'-]{3,40}?)(?:[.,!]|$| and | with | for | last | this | yesterday)/i,
    kind: 'place',
  },
  { re: /\bI(?:'m| am) (?:a|an) ([\w\s-]{3,40}?)(?:[.,!]|$| and | who )/i, kind: 'identity' },
  { re: /\bI (?:work|worked) (?:as|at|in|for) ([\w\s'-]{3,40}?)(?:[.,!]|$| and )/i, kind: 'work' },
  { re: /\bI (?:live|lived|moved) (?:in|to) ([\w\s'-]{3,40}?)(?:[.,!]|$| and )/i, kind: 'place' },
  { re: /\bmy ([a-z]+(?: [a-z]+)?) (?:is|are|was) ([\w\s'-]{2,40}?)(?:[.,!]|$| and )/i, kind: 'possession' },
  {
    re: /\bI (?:have|had|got|adopted|bought) (?:a|an|two|three|my) ([\w\s'-]{3,40}?)(?:[.,!]|$| and )/i,
    kind: 'possession',
  },
  {
    re: /\bI (?:love|like|enjoy|prefer|adore|hate|dislike) ([\w\s'-]{3,40}?)(?:[.,!]|$| and | because )/i,
    kind: 'preference',
  },
  { re: /\bI(?:'m| am) (?:planning|going|hoping) to ([\w\s'-]{3,40}?)(?:[.,!]|$| and )/i, kind: 'plan' },
  {
    re: /\bI (?:just |recently )?(?:started|joined|finished|signed up for) ([\w\s'-]{3,40}?)(?:[.,!]|$| and )/i,
    kind: 'activity',
  },
] as const;

/** Content words a question needs before it can count as unresolved. */
const MIN_QUESTION_WORDS = 3;

const CORRECTION = /\b(actually|I meant|no,|not what I)\b/i;
const UNCERTAIN =
  /\b(not sure|don't know|do not know|no idea|unclear|hard to say|can't say|cannot say|let me check|I'll find out|unsure)\b/i;

interface Candidate {
  score: number;
  fact: BatchAnswer['new_facts'][number];
}

const POSITIVE =
  /\b(love|loved|great|happy|glad|thanks|thank you|awesome|excited|wonderful|amazing|enjoy|enjoyed|proud|fun)\b/gi;
const NEGATIVE =
  /\b(hate|hated|sad|angry|upset|annoyed|frustrated|worried|stressed|terrible|awful|tired|lonely|wrong|sorry)\b/gi;

/**
 * The assessment (req R-EVT-4) by rules: caution grows with corrections (twice) and
 * uncertain replies per turn, confidence starts at 0.9 and falls by half the caution,
 * sentiment is the balance of positive and negative words in the user's messages.
 */
export function assessOffline(turns: readonly PromptTurn[]): EmotionState {
  const n = Math.max(1, turns.length);
  const corrected = turns.filter((t) => CORRECTION.test(t.user)).length;
  const uncertain = turns.filter((t) => UNCERTAIN.test(t.agent)).length;
  const caution = Math.min(1, (2 * corrected + uncertain) / n);
  const pos = turns.reduce((k, t) => k + (t.user.match(POSITIVE)?.length ?? 0), 0);
  const neg = turns.reduce((k, t) => k + (t.user.match(NEGATIVE)?.length ?? 0), 0);
  const round2 = (x: number) => Math.round(x * 100) / 100;
  return {
    confidence: round2(turns.length === 0 ? 0.5 : 0.9 - 0.5 * caution),
    caution: round2(caution),
    sentiment: pos + neg === 0 ? 0 : round2((pos - neg) / (pos + neg)),
  };
}

/** A reflection entry by rules, when the prompt asks for one: the event, what the turns were about, the latest earlier entry. */
export function reflectionEntryOffline(prompt: string, turns: readonly PromptTurn[]): ReflectionEntry | undefined {
  if (!prompt.includes('\n## Your reflection\n')) return undefined;
  const event = /^The agent's note \(([a-z_]+)\): (.*)$/m.exec(prompt);
  const earlier = [
    ...(/## Earlier diary entries\n([\s\S]*?)\n\n## /.exec(prompt)?.[1] ?? '').matchAll(/^- .*?: (.*) → (.*)$/gm),
  ];
  // An event's batch with no turn reviews the event itself: its note and episodes give the words.
  const material = /\n## The event to reflect on\n[^\n]*\n([\s\S]*?)(?=\n\n## |$)/.exec(prompt)?.[1];
  const words = topKeywords(
    turns.length > 0 || material === undefined
      ? turns.map((t) => t.user).join(' ')
      : material.replace(/^The agent's note \([a-z_]+\): /m, ''),
    3,
  );
  const about = words.length > 0 ? words.join(', ') : 'what the user asked';
  const latest = earlier[0]?.[2];
  const what = turns.length === 0 && material !== undefined ? 'the event was about' : "the user's turns were about";
  return {
    insight: `${event ? `After ${event[1]} (${event[2]?.slice(0, 120)})` : 'At this event'}, ${what} ${about}.`,
    recommendation: `Ask about ${about} before acting${latest ? `; earlier: ${latest.slice(0, 200)}` : ''}.`,
    confidence: Math.min(0.9, 0.6 + 0.1 * earlier.length),
  };
}

/** Deterministic reflection over the prompt's turns. */
export function reflectOffline(
  prompt: string,
): BatchAnswer & { assessment: EmotionState; reflection?: ReflectionEntry } {
  const { turns, existing } = parseReflectorPrompt(prompt);
  const candidates: Candidate[] = [];
  const corrections: BatchAnswer['corrections'] = [];
  const openQuestions: BatchAnswer['open_questions'] = [];
  const connections: BatchAnswer['connections'] = [];

  for (const turn of turns) {
    for (const sentence of sentences(turn.user)) {
      const correction = correctionOf(turn, sentence, existing);
      if (correction) {
        corrections.push(correction);
        continue;
      }
      const fact = selfStatementOf(turn, sentence);
      if (fact) candidates.push(fact);
    }
    const question = openQuestionOf(turn);
    if (question) openQuestions.push(question);
    const connection = connectionOf(turn, existing);
    if (connection) connections.push(connection);
  }
  candidates.push(...recurringTopics(turns));

  const reflection = reflectionEntryOffline(prompt, turns);
  return {
    new_facts: rankFacts(candidates),
    corrections,
    connections,
    open_questions: openQuestions,
    assessment: assessOffline(turns),
    ...(reflection ? { reflection } : {}),
  };
}

type Existing = ReturnType<typeof parseReflectorPrompt>['existing'];

/** A sentence that corrects something and shares a word with an existing document corrects that document. */
function correctionOf(
  turn: PromptTurn,
  sentence: string,
  existing: Existing,
): BatchAnswer['corrections'][number] | null {
  if (!CORRECTION.test(sentence)) return null;
  const words = new Set(contentWords(sentence));
  const target = existing.find((e) => contentWords(`${e.path} ${e.summary}`).some((w) => words.has(w)));
  if (!target) return null;
  return {
    existing_file: target.path,
    what_changed: `The user corrected this: "${sentence}"`,
    source_turns: [turn.turnId],
    new_confidence_hint: 'lower',
  };
}

/** The first self statement ("I prefer …", "my sister …") the sentence makes, as a fact candidate. */
function selfStatementOf(turn: PromptTurn, sentence: string): Candidate | null {
  for (const { re, kind } of SELF_STATEMENT) {
    const m = re.exec(sentence);
    if (!m) continue;
    const subject = (m[2] ? `${m[1]} ${m[2]}` : (m[1] ?? '')).trim();
    if (contentWords(subject).length === 0) continue;
    if (kind === 'people' && contentWords(sentence).length < 4) continue; // "my kids!" says too little
    return {
      score: 2 + contentWords(subject).length / 10,
      fact: {
        title: slugify(`${kind} ${subject}`),
        content: `The user said (turn ${turn.turnId}): "${sentence}"`,
        source_turns: [turn.turnId],
        related_existing: [],
        category: kind === 'preference' ? 'Patterns' : kind === 'people' ? 'Concepts' : 'Facts',
      },
    };
  }
  return null;
}

/** The turn's last question, when the reply was uncertain or did not address it. */
function openQuestionOf(turn: PromptTurn): BatchAnswer['open_questions'][number] | null {
  if (!turn.user.includes('?')) return null;
  const question =
    sentences(turn.user)
      .filter((s) => s.endsWith('?'))
      .pop() ?? turn.user;
  const asked = new Set(contentWords(question));
  const answered = contentWords(turn.agent).some((w) => asked.has(w));
  // Small talk ("How are you?", "Anything new?") is not an open question: it needs substance.
  if (asked.size < MIN_QUESTION_WORDS || (!UNCERTAIN.test(turn.agent) && answered)) return null;
  return {
    question,
    source_turns: [turn.turnId],
    why_unresolved: UNCERTAIN.test(turn.agent) ? 'the reply was uncertain' : 'the reply did not address it',
  };
}

/** Two existing documents the turn touches came up together. */
function connectionOf(turn: PromptTurn, existing: Existing): BatchAnswer['connections'][number] | null {
  const words = new Set(contentWords(turn.user));
  const touched = existing.filter((e) => contentWords(`${e.path} ${e.summary}`).some((w) => words.has(w)));
  if (touched.length >= 2 && touched[0] && touched[1]) {
    return {
      file_a: touched[0].path,
      file_b: touched[1].path,
      relationship: `Both came up together in turn ${turn.turnId}.`,
      source_turns: [turn.turnId],
    };
  }
  return null;
}

/** Topics the user came back to in three or more turns. */
function recurringTopics(turns: readonly PromptTurn[]): Candidate[] {
  const turnsByWord = new Map<string, number[]>();
  for (const turn of turns) {
    // Bracketed annotations ("[shares a photo: …]") are not what the user talks about.
    const said = turn.user.replace(/\[[^\]]*\]/g, ' ');
    for (const w of new Set(contentWords(said))) turnsByWord.set(w, [...(turnsByWord.get(w) ?? []), turn.turnId]);
  }
  const out: Candidate[] = [];
  for (const [word, ids] of [...turnsByWord.entries()].sort(
    (a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]),
  )) {
    if (ids.length < 3) break;
    out.push({
      score: 1.5 + ids.length / 10,
      fact: {
        title: slugify(`recurring topic ${word}`),
        content: `The user returned to "${word}" in ${ids.length} turns (${ids.join(', ')}).`,
        source_turns: ids,
        related_existing: [],
        category: 'Patterns',
      },
    });
  }
  return out;
}

/** The candidates' facts, best first, one per title. */
function rankFacts(candidates: Candidate[]): BatchAnswer['new_facts'] {
  const seen = new Set<string>();
  return candidates
    .sort((a, b) => b.score - a.score || a.fact.source_turns[0]! - b.fact.source_turns[0]!)
    .map((c) => c.fact)
    .filter((f) => {
      if (seen.has(f.title)) return false;
      seen.add(f.title);
      return true;
    });
}

/**
 * The offline model's answer to req R-SUM-2's "Write a concise summary of the current
 * context.": which turns, the topics the user raised most, what they said about
 * themselves (quoted), and the questions left open. Extractive and deterministic. When the
 * context opens with the session's previous summary ("### Summary of turns a–b", carried
 * forward), the answer stands for the whole session: from its first turn, its topics and
 * quotes weighed in with the new turns' (the newest quotes kept), its open questions kept
 * after the new ones.
 */
export function summarizeOffline(context: string): string {
  const { turns } = parseReflectorPrompt(`## Existing knowledge\n(none)\n\n## Turns\n${context}`);
  const carried = carriedOf(context);
  if (turns.length === 0 && !carried) return 'There is no conversation to summarise yet.';
  const reflection = reflectOffline(`## Existing knowledge\n(none)\n\n## Turns\n${context}`);
  const topics = topKeywords([carried?.words ?? '', ...turns.map((t) => t.user)].join(' '), 5);
  const first = carried?.first ?? turns[0]?.turnId;
  const last = turns[turns.length - 1]?.turnId ?? carried?.last;
  const said = reflection.new_facts
    .filter((f) => f.content.startsWith('The user said'))
    .slice(0, 3)
    .map((f) => f.content.replace(/^The user said \(turn \d+\): /, ''));
  const quotes = [...(carried?.said ?? []), ...said].slice(-MAX_SUMMARY_QUOTES);
  const open = [...reflection.open_questions.map((q) => q.question), ...(carried?.open ?? [])].slice(0, 2);
  const parts = [
    `Turns ${first}–${last}: the user talked about ${topics.length > 0 ? topics.join(', ') : 'nothing in particular'}.`,
  ];
  if (quotes.length > 0) parts.push(`They said: ${quotes.join(' ')}`);
  if (open.length > 0) parts.push(`Still open: ${open.join(' ')}`);
  return parts.join('\n');
}

/** Most quotes a summary keeps (a carried summary's and the new turns', newest last). */
const MAX_SUMMARY_QUOTES = 4;

/** The previous summary a summary context carries: its turns, its words, its quotes and open questions (summarizeOffline's lines, or any prose). */
function carriedOf(
  context: string,
): { first: number; last: number; words: string; said: string[]; open: string[] } | null {
  const m = /^### Summary of turns (\d+)–(\d+)\n([\s\S]*?)(?=\n\n#{2,3} |(?![\s\S]))/m.exec(context);
  if (!m) return null;
  const text = m[3] ?? '';
  const said = /^They said: (.+)$/m.exec(text)?.[1] ?? '';
  return {
    first: Number(m[1]),
    last: Number(m[2]),
    words: text.replace(/^Turns \d+–\d+: the user talked about /m, '').replace(/^(They said|Still open): .*$/gm, ''),
    said: sentences(said),
    open: (/^Still open: (.+)$/m.exec(text)?.[1] ?? '').split(/(?<=\?)\s+/).filter(Boolean),
  };
}
