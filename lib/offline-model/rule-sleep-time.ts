/**
 * THE OFFLINE MODEL's sleep-time reflections (rule-based, not an LLM; see rule-reflector.ts):
 * the nightly one over a day's messages and summaries, the weekly one over a week's summaries,
 * answering in the req R-SLP schemas from surface patterns.
 */
import type { Finding, NightlyOutput } from '../sleep-time/nightly.js';
import type { WeeklyOutput } from '../sleep-time/weekly.js';
import { contentWords, topKeywords } from '../kernel/text.js';
import { type PromptTurn, parseReflectorPrompt, reflectOffline } from './rule-reflector.js';

/**
 * The summaries in a nightly prompt ("### Summary of turns a–b"), each read as one
 * message of the user's that the heading's turns (a and b, as written there) are cited for,
 * with the questions it says are still open.
 */
function promptSummaries(messages: string): Array<{ turns: number[]; text: string; open: string[] }> {
  return [...messages.matchAll(/^### Summary of turns (\d+)–(\d+)\n([\s\S]*?)(?=\n\n#{2,3} |(?![\s\S]))/gm)].map(
    (m) => {
      const text = m[3] ?? '';
      // What the user said and talked about, without the summary's own wording (summarizeOffline's lines).
      const words = text
        .replace(/^Turns \d+–\d+: the user talked about /m, '')
        .replace(/^They said: /m, '')
        .replace(/^Still open: .*$/m, '');
      return {
        turns: [...new Set([Number(m[1]), Number(m[2])])],
        text: words,
        open: [...text.matchAll(/^Still open: (.+)$/gm)].flatMap((o) => (o[1] ?? '').split(/(?<=\?)\s+/)),
      };
    },
  );
}

/**
 * The offline model's nightly reflection: patterns (a topic in 2+ turns; HIGH at 4+),
 * preferences ("I love/like/prefer X" in 3+ turns: HIGH), corrections (WRONG → RIGHT from
 * "actually …, not …" / "I meant …"), relationships ("my sister Anna" → (user, sister, Anna)),
 * unresolved questions. A summary counts as one message, cited by its heading's turns. It
 * finds no contradictions: that needs understanding it lacks.
 */
export function nightlyOffline(prompt: string): NightlyOutput {
  const messages = prompt.split('## Messages to reflect on')[1] ?? prompt;
  const summaries = promptSummaries(messages);
  const said = parseReflectorPrompt(`## Existing knowledge\n(none)\n\n## Turns\n${messages}`).turns.map((t) => ({
    ...t,
    cite: [t.turnId],
  }));
  const turns = [
    ...said,
    ...summaries.map((m) => ({ turnId: m.turns[0] ?? 0, user: m.text, agent: '', cite: m.turns })),
  ];
  const findings: Finding[] = [...patternsOf(turns), ...preferencesOf(turns), ...correctionsAndRelationshipsOf(turns)];
  const open = reflectOffline(`## Existing knowledge\n(none)\n\n## Turns\n${messages}`).open_questions;
  for (const q of open)
    findings.push({
      category: 'unresolved',
      confidence: 'MEDIUM',
      statement: q.question,
      evidence_turns: q.source_turns,
    });
  for (const m of summaries)
    for (const q of m.open)
      findings.push({ category: 'unresolved', confidence: 'MEDIUM', statement: q, evidence_turns: m.turns });
  return { findings: findings.slice(0, 30) };
}

/** A message the nightly reflection reads: a turn said, or a summary; `cite` is the turns it stands for. */
type CitedMessage = PromptTurn & { cite: number[] };

/** Patterns: the three words most messages share (2+; HIGH at 4+). */
function patternsOf(turns: readonly CitedMessage[]): Finding[] {
  const byWord = new Map<string, number[][]>();
  for (const t of turns) {
    for (const w of new Set(contentWords(t.user.replace(/\[[^\]]*\]/g, ' '))))
      byWord.set(w, [...(byWord.get(w) ?? []), t.cite]);
  }
  const findings: Finding[] = [];
  for (const [word, cites] of [...byWord.entries()]
    .filter(([, cites]) => cites.length >= 2)
    .sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))
    .slice(0, 3)) {
    findings.push({
      category: 'pattern',
      confidence: cites.length >= 4 ? 'HIGH' : 'MEDIUM',
      statement: `The user keeps coming back to ${word}.`,
      evidence_turns: cites.flat(),
    });
  }
  return findings;
}

/** Preferences: "I love/like/prefer X" (HIGH in 3+ messages). */
function preferencesOf(turns: readonly CitedMessage[]): Finding[] {
  const likes = new Map<string, number[]>();
  for (const t of turns) {
    for (const m of t.user.matchAll(/\bI (?:really )?(?:love|like|enjoy|prefer|adore) ([a-z]+)/gi)) {
      const what = (m[1] ?? '').toLowerCase();
      if (contentWords(what).length > 0) likes.set(what, [...(likes.get(what) ?? []), ...t.cite]);
    }
  }
  const findings: Finding[] = [];
  for (const [what, ids] of likes) {
    findings.push({
      category: 'preference',
      confidence: ids.length >= 3 ? 'HIGH' : 'MEDIUM',
      statement: `The user likes ${what}.`,
      evidence_turns: ids,
    });
  }
  return findings;
}

/** Corrections ("actually …, not …" / "I meant …") and relationships ("my sister Anna"), message by message. */
function correctionsAndRelationshipsOf(turns: readonly CitedMessage[]): Finding[] {
  const findings: Finding[] = [];
  for (const t of turns) {
    const c = /\bactually,? (.+?),? not (.+?)[.!?]?$/im.exec(t.user) ?? /\bI meant (.+?)[.!?]?$/im.exec(t.user);
    if (c) {
      findings.push({
        category: 'correction',
        confidence: 'MEDIUM',
        statement: `The user corrected: ${c[0]}`,
        evidence_turns: t.cite,
        wrong: c[2] ?? 'what was said before',
        right: c[1] ?? '',
      });
    }
    for (const m of t.user.matchAll(
      /\b[Mm]y (husband|wife|partner|son|daughter|mom|mother|dad|father|sister|brother|friend|dog|cat)(?: named| called)? ([A-Z][a-z]+)/g,
    )) {
      findings.push({
        category: 'relationship',
        confidence: 'HIGH',
        statement: `${m[2]} is the user's ${m[1]}.`,
        evidence_turns: t.cite,
        subject: 'the user',
        relationship: `has ${m[1]}`,
        object: m[2] ?? '',
      });
    }
  }
  return findings;
}

/** The offline model's weekly reflection over summaries: topics by first and last appearance. */
export function weeklyOffline(prompt: string): WeeklyOutput {
  const entries = [...prompt.matchAll(/^### (\w+) — (\S+)\n([\s\S]*?)(?=\n### |(?![\s\S]))/gm)].map((m) => ({
    at: m[2] ?? '',
    text: m[3] ?? '',
  }));
  if (entries.length === 0) return { trajectory: '', topic_drift: [], weekly_patterns: [], unresolved_arcs: [] };
  const half = Math.ceil(entries.length / 2);
  const early = new Set(
    topKeywords(
      entries
        .slice(0, half)
        .map((e) => e.text)
        .join(' '),
      8,
    ),
  );
  const late = new Set(
    topKeywords(
      entries
        .slice(half)
        .map((e) => e.text)
        .join(' '),
      8,
    ),
  );
  const drift = [
    ...[...early].filter((t) => !late.has(t)).map((topic) => ({ topic, status: 'dropped' as const })),
    ...[...late].filter((t) => !early.has(t)).map((topic) => ({ topic, status: 'new' as const })),
    ...[...early].filter((t) => late.has(t)).map((topic) => ({ topic, status: 'continuing' as const })),
  ];
  const continuing = drift.filter((d) => d.status === 'continuing').map((d) => d.topic);
  return {
    trajectory: `Early in the week: ${[...early].slice(0, 4).join(', ') || 'little'}; later: ${[...late].slice(0, 4).join(', ') || 'little'}.`,
    topic_drift: drift.slice(0, 20),
    weekly_patterns: continuing.length > 0 ? [`Recurring all week: ${continuing.join(', ')}.`] : [],
    unresolved_arcs: entries
      .filter((e) => /Still open:/.test(e.text))
      .map((e) => (e.text.split('Still open:')[1] ?? '').trim())
      .filter(Boolean)
      .slice(0, 10),
  };
}
