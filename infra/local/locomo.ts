/**
 * LoCoMo conversations (snap-research/locomo, CC BY-NC 4.0) → turn.saved events.
 * speaker_a is the user, speaker_b the agent; a turn is one run of speaker_a's lines and
 * the run of speaker_b's lines that answers it. A session that speaker_b opens gives a
 * first turn whose query says so. Timestamps come from the session's date, lines 30 s
 * apart; each turn's `dia_id`s travel in `attributes.dia_ids` (space-separated).
 */
import type { TurnSaved } from '../../events/turn-saved.js';

interface LocomoLine {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

export type LocomoConversation = Record<string, unknown> & { speaker_a: string; speaker_b: string };

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** "1:56 pm on 8 May, 2023" → Date (UTC). */
export function parseLocomoDate(text: string): Date {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(text);
  if (!m) throw new Error(`unrecognised LoCoMo date: ${text}`);
  const [, hh, mm, ampm, day, month, year] = m;
  let hour = Number(hh) % 12;
  if (ampm?.toLowerCase() === 'pm') hour += 12;
  const monthIndex = MONTHS.indexOf((month ?? '').toLowerCase());
  if (monthIndex < 0) throw new Error(`unrecognised month in LoCoMo date: ${text}`);
  return new Date(Date.UTC(Number(year), monthIndex, Number(day), hour, Number(mm)));
}

const lineText = (l: LocomoLine) => (l.blip_caption ? `${l.text} [shares a photo: ${l.blip_caption}]` : l.text);

export function locomoToTurns(
  conv: LocomoConversation,
  options: { userId: string; source: string; maxSessions?: number },
): TurnSaved[] {
  const sessions = Object.keys(conv)
    .map((k) => /^session_(\d+)$/.exec(k))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b)
    .slice(0, options.maxSessions ?? Number.POSITIVE_INFINITY);
  const turns: TurnSaved[] = [];
  let turnId = 0;
  for (const n of sessions) {
    const lines = conv[`session_${n}`] as LocomoLine[];
    const start = parseLocomoDate(String(conv[`session_${n}_date_time`]));
    let current: { user: LocomoLine[]; agent: LocomoLine[]; firstIndex: number } | null = null;
    const flush = () => {
      if (!current) return;
      turnId += 1;
      const all = [...current.user, ...current.agent];
      turns.push({
        type: 'turn.saved',
        version: 1,
        userId: options.userId,
        sessionId: `${options.source}-session-${n}`,
        turnId,
        timestamp: new Date(start.getTime() + current.firstIndex * 30_000).toISOString(),
        query:
          current.user.length > 0
            ? current.user.map(lineText).join('\n')
            : `(${conv.speaker_b} opens the conversation)`,
        response: current.agent.map(lineText).join('\n'),
        attributes: { dia_ids: all.map((l) => l.dia_id).join(' '), source: options.source, session: String(n) },
      });
      current = null;
    };
    lines.forEach((line, i) => {
      const isUser = line.speaker === conv.speaker_a;
      if (isUser && current && current.agent.length > 0) flush();
      current ??= { user: [], agent: [], firstIndex: i };
      (isUser ? current.user : current.agent).push(line);
    });
    flush();
  }
  return turns;
}

/** True when a parsed JSON value looks like a LoCoMo conversation file. */
export function isLocomo(value: unknown): value is LocomoConversation {
  return (
    typeof value === 'object' && value !== null && 'speaker_a' in value && 'speaker_b' in value && 'session_1' in value
  );
}

/**
 * The lines to replay from a file's text: a LoCoMo conversation (JSON) is converted to
 * turn.saved events for user `locomo-{name}`; anything else is taken as JSONL.
 */
export function replayLinesFromFile(text: string, name: string): { lines: string[]; format: 'locomo' | 'jsonl' } {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    try {
      const value = JSON.parse(text) as unknown;
      if (isLocomo(value)) {
        const base = name.replace(/\.json$/, '').replace(/[^A-Za-z0-9._:@-]/g, '-');
        return {
          lines: locomoToTurns(value, { userId: `locomo-${base}`, source: `locomo/${base}` }).map((t) =>
            JSON.stringify(t),
          ),
          format: 'locomo',
        };
      }
    } catch {
      // not a single JSON document: JSONL
    }
  }
  return { lines: text.split(/\r?\n/), format: 'jsonl' };
}
