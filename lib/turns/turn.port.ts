/** Ports of the turns: where turns and episodes are kept, claim checks, rejected events, and the TurnQueue for events the service raises. */
import type { TurnSaved } from '../../events/turn-saved.js';
import type { AgentEvent } from '../../events/agent-event.js';
import type { EventEpisode } from './episodes.js';
import type { TurnIndexEntry } from '../items/source-items.js';

export interface TurnStore {
  /**
   * Store each turn's document and index entry. Idempotent: a retry rewrites the same keys.
   * `marked`: the turn ids (of these turns or others of their users) to mark as changed for
   * the search index, in the same write; all of these turns when absent (the signal
   * marks only the turns the turn index cannot stand for, docs/search-index.md "Turns without marks").
   */
  saveTurns(turns: readonly TurnSaved[], marked?: ReadonlyArray<{ userId: string; turnId: number }>): Promise<void>;
  /**
   * Records, once per user, the lowest turn id the signal function may write without a change
   * mark (`TURNLOG`, a put only if absent: an earlier, lower one stays).
   */
  openTurnLog(userId: string, from: number): Promise<void>;
  /** Which of these turn ids of the user the index holds already. */
  indexedTurnIds(userId: string, turnIds: readonly number[]): Promise<Set<number>>;
  /** Ids of the user's turns whose timestamp is at or after `fromIso` (newest first, at most `limit`). */
  turnsSince(userId: string, fromIso: string, limit: number): Promise<number[]>;
  /** The index entries of these turns (text, validation, attributes); unknown ids are left out. */
  turnIndex(userId: string, turnIds: readonly number[]): Promise<TurnIndexEntry[]>;
  /** The index entries of the user's turns that carried an episode (req R-EPI), oldest first. */
  episodes(userId: string): Promise<TurnIndexEntry[]>;
  /** Store agent.event episodes (idempotent by episode id). */
  saveEventEpisodes(episodes: readonly EventEpisode[]): Promise<void>;
  /** The user's agent.event episodes: these ids (those found), or all of them; by time, then id. */
  eventEpisodes(userId: string, episodeIds?: readonly string[]): Promise<EventEpisode[]>;
  /** Load turns by id; ids with no index entry or an unreadable document come back as missing. */
  getTurns(
    userId: string,
    turnIds: readonly number[],
  ): Promise<{ turns: TurnSaved[]; missing: Array<{ turnId: number; reason: string }> }>;
}

export interface ClaimCheckStore {
  /** Fetch the full event a claim check points at (the raw JSON text). */
  fetch(key: string): Promise<string>;
}

export interface RejectedEvent {
  source: string;
  messageId: string;
  receivedAt: string;
  errors: Array<{ path: string; message: string }>;
  body: string;
}

export interface RejectedEventLog {
  /** Keep a rejected record with its reasons. Idempotent by (source, messageId). */
  keep(event: RejectedEvent): Promise<void>;
}

/** The TurnQueue, for events the service raises itself (an agent.event a person asks for through the API). */
export interface AgentEventPublisher {
  publish(events: readonly AgentEvent[]): Promise<void>;
}
