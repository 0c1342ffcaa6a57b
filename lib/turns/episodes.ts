/**
 * Episodic memory (req R-EPI): a turn may carry what the agent set out to do and how
 * it went — goal, plan, actions (capability, params, result, confidence), outcome. The
 * episode is stored with the turn (document and index), is searchable as content type
 * `episode` so a planner can look for similar episodes before it plans, gets an episode
 * document linked to the reflection that reviewed its turn, and feeds the user's
 * capability confidence.
 *
 * An episode may also come on an `agent.event` (a plan execution that ended): it is stored
 * on its own (`EPISODE#{id}` beside the turn index; the id is a hash of the event, so a
 * redelivery or republish stores it once), waits in the signal state like a turn, and the
 * next batch of the user writes its document, linked to that batch.
 *
 * Capability confidence (the seed gives no formula; ours): every action is one use of its
 * capability, a success when the action says so or, when it does not, when the episode
 * succeeded. confidence = (successes + 1) / (uses + 2), so one use moves a new capability
 * only part of the way; `recent` is the success rate of the last RECENT_USES uses, and the
 * trend compares it with the uses before them.
 */
import { createHash } from 'node:crypto';
import type { AgentEvent } from '../../events/agent-event.js';
import type { Episode } from '../../events/episode.js';
import { renderFrontMatter } from '../kernel/front-matter.js';

/** What the turn index keeps of an episode (enough for search results and capability confidence). */
export interface EpisodeSummary {
  goal: string;
  success: boolean;
  /** One entry per action, in order: the capability and whether that use worked. */
  uses: Array<{ capability: string; success: boolean }>;
  failureReason?: string;
  durationMs?: number;
}

export const RECENT_USES = 10;
/** Success rates this far apart (recent vs before) make a trend. */
const TREND_DELTA = 0.2;

const round2 = (n: number) => Math.round(n * 100) / 100;

export function summariseEpisode(e: Episode): EpisodeSummary {
  return {
    goal: e.goal,
    success: e.outcome.success,
    uses: e.actions.map((a) => ({ capability: a.capability, success: a.success ?? e.outcome.success })),
    ...(e.outcome.failureReason !== undefined ? { failureReason: e.outcome.failureReason } : {}),
    ...(e.outcome.durationMs !== undefined ? { durationMs: e.outcome.durationMs } : {}),
  };
}

/** The episode in words, for search: goal, plan, what each action did, how it ended. */
export function episodeText(e: Episode): string {
  const lines = [`Episode goal: ${e.goal}`];
  if (e.plan?.length) lines.push(`Plan: ${e.plan.join('; ')}`);
  for (const a of e.actions) lines.push(`Action ${a.capability}${a.result ? `: ${a.result}` : ''}`);
  lines.push(
    e.outcome.success
      ? 'Outcome: succeeded'
      : `Outcome: failed${e.outcome.failureReason ? ` (${e.outcome.failureReason})` : ''}`,
  );
  return lines.join('\n');
}

export interface CapabilityConfidence {
  capability: string;
  uses: number;
  successes: number;
  /** (successes + 1) / (uses + 2). */
  confidence: number;
  recent: { uses: number; successRate: number };
  /** `new` until there are more uses than the recent window. */
  trend: 'new' | 'improving' | 'declining' | 'steady';
  lastUsedAt: string;
}

/** One episode as capability confidence counts it: a turn's (turnId) or an agent.event's (episodeId). */
export interface EpisodeUse {
  timestamp: string;
  turnId?: number | undefined;
  episodeId?: string | undefined;
  episode: EpisodeSummary;
}

/** Capability confidence over a user's episodes (any order: sorted by time, then turn, then event episode id). */
export function capabilityConfidence(episodes: readonly EpisodeUse[]): CapabilityConfidence[] {
  const byCapability = new Map<string, Array<{ success: boolean; at: string }>>();
  const ordered = [...episodes].sort(
    (a, b) =>
      Date.parse(a.timestamp) - Date.parse(b.timestamp) ||
      (a.turnId ?? Number.MAX_SAFE_INTEGER) - (b.turnId ?? Number.MAX_SAFE_INTEGER) ||
      (a.episodeId ?? '').localeCompare(b.episodeId ?? ''),
  );
  for (const { timestamp, episode } of ordered) {
    for (const use of episode.uses) {
      const list = byCapability.get(use.capability) ?? [];
      list.push({ success: use.success, at: timestamp });
      byCapability.set(use.capability, list);
    }
  }
  const rate = (list: ReadonlyArray<{ success: boolean }>) =>
    list.length === 0 ? 0 : list.filter((u) => u.success).length / list.length;
  return [...byCapability.entries()]
    .map(([capability, list]) => {
      const successes = list.filter((u) => u.success).length;
      const recent = list.slice(-RECENT_USES);
      const before = list.slice(0, -RECENT_USES);
      const delta = rate(recent) - rate(before);
      const trend: CapabilityConfidence['trend'] =
        before.length === 0
          ? 'new'
          : delta >= TREND_DELTA
            ? 'improving'
            : delta <= -TREND_DELTA
              ? 'declining'
              : 'steady';
      return {
        capability,
        uses: list.length,
        successes,
        confidence: round2((successes + 1) / (list.length + 2)),
        recent: { uses: recent.length, successRate: round2(rate(recent)) },
        trend,
        lastUsedAt: list.at(-1)?.at ?? '',
      };
    })
    .sort((a, b) => b.uses - a.uses || a.capability.localeCompare(b.capability));
}

/** An agent.event's episode as stored. */
export interface EventEpisode {
  userId: string;
  /** `ev-` + a hash of the event (see eventEpisodeId). */
  episodeId: string;
  timestamp: string;
  trigger: AgentEvent['trigger'];
  sessionId?: string | undefined;
  turnId?: number | undefined;
  detail?: string | undefined;
  episode: Episode;
}

/** An agent.event's episode id: the same event (redelivered or republished) gives the same id. */
export function eventEpisodeId(
  event: Pick<AgentEvent, 'userId' | 'timestamp' | 'trigger' | 'turnId' | 'episode'>,
): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([event.userId, event.timestamp, event.trigger, event.turnId ?? null, event.episode ?? null]))
    .digest('hex');
  return `ev-${digest.slice(0, 20)}`;
}

/** An agent.event episode in words, for search: the event's detail, then the episode. */
export function eventEpisodeText(e: Pick<EventEpisode, 'trigger' | 'detail' | 'episode'>): string {
  return `${e.detail ? `${e.detail}\n` : ''}${episodeText(e.episode)}`;
}

/** The stored form of an agent.event's episode, or null when it carries none. */
export function eventEpisodeOf(event: AgentEvent): EventEpisode | null {
  if (!event.episode) return null;
  return {
    userId: event.userId,
    episodeId: eventEpisodeId(event),
    timestamp: event.timestamp,
    trigger: event.trigger,
    ...(event.sessionId !== undefined ? { sessionId: event.sessionId } : {}),
    ...(event.turnId !== undefined ? { turnId: event.turnId } : {}),
    ...(event.detail !== undefined ? { detail: event.detail } : {}),
    episode: event.episode,
  };
}

/**
 * The episode document (`users/{u}/episodes/{turnId}.md`, or `…/{episodeId}.md` for an
 * agent.event's), written by the reflection that reviewed its turn (or the next one after
 * the event): links to that batch and to what it learned from the turn.
 */
export function episodeDocument(
  source: {
    turnId?: number | undefined;
    episodeId?: string | undefined;
    sessionId?: string | undefined;
    timestamp: string;
    trigger?: string | undefined;
    episode: Episode;
  },
  batchId: string,
  learned: readonly string[],
): string {
  const e = source.episode;
  const meta = {
    kind: 'episode',
    ...(source.episodeId !== undefined ? { episode_id: source.episodeId } : {}),
    ...(source.trigger !== undefined ? { trigger: source.trigger } : {}),
    ...(source.turnId !== undefined ? { turn_id: source.turnId } : {}),
    ...(source.sessionId !== undefined ? { session_id: source.sessionId } : {}),
    timestamp: source.timestamp,
    goal: e.goal,
    success: e.outcome.success,
    ...(e.outcome.failureReason !== undefined ? { failure_reason: e.outcome.failureReason } : {}),
    ...(e.outcome.durationMs !== undefined ? { duration_ms: e.outcome.durationMs } : {}),
    capabilities: [...new Set(e.actions.map((a) => a.capability))],
    reflections: [batchId],
    learned: [...learned],
  };
  const parts = [`# Episode: ${e.goal}`];
  if (e.plan?.length) parts.push(`## Plan\n${e.plan.map((p, i) => `${i + 1}. ${p}`).join('\n')}`);
  if (e.actions.length > 0) {
    parts.push(
      `## Actions\n${e.actions
        .map((a) => {
          const bits = [`- **${a.capability}**`];
          if (a.params !== undefined) bits.push(`params \`${JSON.stringify(a.params)}\``);
          if (a.confidence !== undefined) bits.push(`confidence ${a.confidence}`);
          if (a.success !== undefined) bits.push(a.success ? 'succeeded' : 'failed');
          return `${bits.join(' · ')}${a.result ? `\n  ${a.result.replace(/\n/g, '\n  ')}` : ''}`;
        })
        .join('\n')}`,
    );
  }
  parts.push(
    `## Outcome\n${e.outcome.success ? 'Succeeded.' : `Failed${e.outcome.failureReason ? `: ${e.outcome.failureReason}` : '.'}`}`,
  );
  return renderFrontMatter(meta, `${parts.join('\n\n')}\n`);
}
