/**
 * An agent.event reflected on by itself (req R-EVT-1, R-EVT-2): when no turn waits for a batch,
 * the event's own words — its `detail` and the episodes that go with its job (goal, plan,
 * actions, outcome) — are what the reflection reviews, instead of nothing happening. When it
 * carries neither, the batch log says there was nothing to reflect on (`NOTHING_TO_REFLECT_ON`).
 */
import { createHash } from 'node:crypto';
import type { AgentEvent } from '../../events/agent-event.js';
import { type EventEpisode, episodeText } from '../turns/episodes.js';

/**
 * An event's id: 15 decimal digits of a hash of the event (48 bits), so a redelivery or a
 * republish of the same event has the same id.
 */
export function eventId(
  event: Pick<AgentEvent, 'userId' | 'timestamp' | 'trigger' | 'sessionId' | 'turnId' | 'detail'>,
): string {
  const digest = createHash('sha256')
    .update(
      JSON.stringify([
        event.userId,
        event.timestamp,
        event.trigger,
        event.sessionId ?? null,
        event.turnId ?? null,
        event.detail ?? null,
      ]),
    )
    .digest('hex');
  return String(Number.parseInt(digest.slice(0, 12), 16)).padStart(15, '0');
}

/**
 * The job id of an event reflected on by itself: `event-{eventId}-{lastTurnId}`, the user's last
 * counted turn when the event came. The same event makes the same job (FIFO deduplication,
 * then the reflector's check of its batch log), and its batch log and diary entry sort among
 * the others by that turn (keys.batchSk, keys.diarySk read an id's last number), not first.
 */
export const eventJobId = (id: string, lastTurnId: number): string => `event-${id}-${lastTurnId}`;

/** Why an event's batch reviews no turn (the batch log's `event_only.reason`). */
export const NO_TURN_WAITING =
  'no turn was waiting for a batch: every turn was reflected on already or is in a batch on its way';

/** Why an event reflected on by itself asked no model (the batch log's `event_only.not_reflected`). */
export const NOTHING_TO_REFLECT_ON =
  'the event carries no detail and no episode, and no turn was waiting: there was nothing to reflect on';

/**
 * Longest event material shown to the model, in characters (≈ 1,500 tokens at 4 a token): a
 * detail is at most 4,000 characters, but up to 50 waiting episodes of up to 64 KB each go
 * with the job, and every character is billed.
 */
export const MAX_EVENT_MATERIAL_CHARS = 6_000;

/**
 * What an event reflected on by itself reviews, as the prompt shows it: the agent's note
 * (`The agent's note (trigger): …`, the line an event's batch prompt has always used), the
 * turn it names, then each episode in words; '' when there is nothing. Cut at
 * MAX_EVENT_MATERIAL_CHARS, saying so.
 */
export function eventMaterial(
  event: { trigger: AgentEvent['trigger']; detail?: string | undefined },
  episodes: ReadonlyArray<Pick<EventEpisode, 'trigger' | 'detail' | 'turnId' | 'episode'>>,
): string {
  const detail = event.detail?.replace(/\s+/g, ' ').trim();
  const parts = [
    ...(detail ? [`The agent's note (${event.trigger}): ${detail}`] : []),
    ...episodes.map((e) => {
      const about = [
        e.detail && e.detail.trim() !== event.detail?.trim()
          ? `after ${e.trigger}: ${e.detail.replace(/\s+/g, ' ').trim()}`
          : '',
        e.turnId !== undefined ? `about turn ${e.turnId}` : '',
      ]
        .filter(Boolean)
        .join(', ');
      return `${about ? `(${about})\n` : ''}${episodeText(e.episode)}`;
    }),
  ];
  const text = parts.join('\n\n');
  const cut = '\n[…truncated]';
  return text.length <= MAX_EVENT_MATERIAL_CHARS
    ? text
    : `${text.slice(0, MAX_EVENT_MATERIAL_CHARS - cut.length)}${cut}`;
}

/** How many short-term entries an event's reflection is shown (req R-EVT-2), most recently changed first. */
export const SHORT_TERM_SHOWN = 10;

/**
 * Req R-EVT-2 (seed 004 P3-M2: a reflection reads short-term memory and what the agent's plans
 * led to): the context an event's reflection sees besides its turns — the user's short-term
 * entries, one line each, and, when turns are waiting (the event's own material is not the
 * reviewed text), the outcomes of the episodes that go with the event. '' when there is none.
 */
export function occasionContext(
  shortTerm: ReadonlyArray<{ title: string; confidence: number; seen?: { sessions: string[] } | undefined }>,
  outcomes: string,
): string {
  const lines = shortTerm.slice(0, SHORT_TERM_SHOWN).map((e) => {
    const sessions = e.seen?.sessions.length ?? 0;
    return `- ${e.title.replace(/\s+/g, ' ').trim().slice(0, 160)} (confidence ${e.confidence}${sessions > 1 ? `, seen in ${sessions} sessions` : ''})`;
  });
  const memory = lines.length > 0 ? `## Short-term memory\n${lines.join('\n')}` : '';
  const plans = outcomes ? `## What the agent's plans led to\n${outcomes}` : '';
  return [memory, plans].filter(Boolean).join('\n\n');
}
