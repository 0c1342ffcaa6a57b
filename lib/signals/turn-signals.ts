/** The five code-only signals of req R-SIG-2 a turn can fire, and the topic the repetition signal compares. */
import type { TurnSaved } from '../../events/turn-saved.js';
import type { SignalConfig } from './signal-weights.js';
import { fnv1a32 } from '../kernel/stable-hash.js';
import { topKeywords } from '../kernel/text.js';

/**
 * Longest word kept whole in a topic. A longer one (a pasted key, a base64 blob: the query
 * has no length limit) is kept as its first 32 characters and a hash of the whole, so a
 * topic costs at most a few hundred bytes in `recentTopics` and two different long words
 * still differ (unless their hashes collide, one chance in 2^32).
 */
export const MAX_TOPIC_WORD_CHARS = 40;

export type SignalName =
  | 'topic_repeated'
  | 'user_correction'
  | 'high_confidence_research'
  | 'knowledge_boundary'
  | 'contradiction';

const CORRECTION_PATTERNS: RegExp[] = [
  /\bactually\b/i,
  /\bI meant\b/i,
  /^\s*no\b/i,
  /\bthat(?:'|’)?s (?:not right|wrong|incorrect)\b/i,
  /\bcorrection\b/i,
];

/** The turn's topic for the repetition signal: its three most frequent content words (long ones bounded). */
export function topicOf(turn: Pick<TurnSaved, 'query'>): string {
  return topKeywords(turn.query, 3).map(boundedWord).join(' ');
}

function boundedWord(word: string): string {
  return word.length <= MAX_TOPIC_WORD_CHARS ? word : `${word.slice(0, 32)}~${fnv1a32(word).toString(36)}`;
}

/** Which of the five signals of req R-SIG a turn fires, given the recent topics before it. */
export function detectSignals(
  turn: Pick<TurnSaved, 'query' | 'signals'>,
  recentTopics: readonly string[],
  config: SignalConfig,
): SignalName[] {
  const fired: SignalName[] = [];
  const topic = new Set(topicOf(turn).split(' ').filter(Boolean));
  if (topic.size > 0) {
    const earlier = recentTopics.filter((t) => t.split(' ').some((w) => topic.has(w))).length;
    if (earlier + 1 >= config.topicRepeatCount) fired.push('topic_repeated');
  }
  if (CORRECTION_PATTERNS.some((re) => re.test(turn.query))) fired.push('user_correction');
  const s = turn.signals;
  if (s?.validation === 'APPROVE' && (s.quality ?? 0) >= config.highConfidenceQuality) {
    fired.push('high_confidence_research');
  }
  if (s?.route !== undefined && config.boundaryRoutes.includes(s.route)) fired.push('knowledge_boundary');
  if (s?.contradiction === true) fired.push('contradiction');
  return fired;
}

export const WEIGHT_OF: Record<SignalName, keyof SignalConfig['weights']> = {
  topic_repeated: 'topicRepeated',
  user_correction: 'userCorrection',
  high_confidence_research: 'highConfidenceResearch',
  knowledge_boundary: 'knowledgeBoundary',
  contradiction: 'contradiction',
};
