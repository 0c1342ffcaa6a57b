/** In-memory turns, claim checks and rejected events for tests, with recording variants; `turn()` makes a valid turn.saved. */
import type { TurnSaved } from '../../events/turn-saved.js';
import type { EventEpisode } from './episodes.js';
import { keys, rejectedEventKey, turnDocKey } from '../kernel/memory-paths.js';
import { turnContentHash, turnIndexEntry, turnSearchText } from './turn-document.js';
import type { RejectedEvent, AgentEventPublisher, ClaimCheckStore, RejectedEventLog, TurnStore } from './turn.port.js';
import type { WriteLog } from '../kernel/write-log.fake.js';
import type { AgentEvent } from '../../events/agent-event.js';

export class MemoryTurnStore implements TurnStore {
  readonly turns = new Map<string, TurnSaved>();
  saveCalls = 0;
  failFor = new Set<string>();
  /** The turn ids each saveTurns asked to mark, by user (only those the turn index cannot stand for). */
  readonly marked: Array<{ userId: string; turnId: number }> = [];
  readonly turnLogs = new Map<string, number>();
  async openTurnLog(userId: string, from: number) {
    if (!this.turnLogs.has(userId)) this.turnLogs.set(userId, from);
  }
  async saveTurns(turns: readonly TurnSaved[], marked: ReadonlyArray<{ userId: string; turnId: number }> = turns) {
    this.saveCalls++;
    this.marked.push(...marked.map((m) => ({ userId: m.userId, turnId: m.turnId })));
    for (const t of turns) {
      if (this.failFor.has(t.userId)) throw new Error(`store down for ${t.userId}`);
      this.turns.set(`${t.userId}#${t.turnId}`, t);
    }
  }
  async turnsSince(userId: string, fromIso: string, limit: number) {
    return [...this.turns.values()]
      .filter((t) => t.userId === userId && t.timestamp >= fromIso)
      .map((t) => t.turnId)
      .sort((a, b) => b - a)
      .slice(0, limit);
  }
  async indexedTurnIds(userId: string, ids: readonly number[]) {
    return new Set(ids.filter((id) => this.turns.has(`${userId}#${id}`)));
  }
  async turnIndex(userId: string, ids: readonly number[]) {
    return ids
      .map((id) => this.turns.get(`${userId}#${id}`))
      .filter((t): t is TurnSaved => t !== undefined)
      .map(turnIndexEntry);
  }
  async episodes(userId: string) {
    return [...this.turns.values()]
      .filter((t) => t.userId === userId && t.episode !== undefined)
      .sort((a, b) => a.turnId - b.turnId)
      .map(turnIndexEntry);
  }
  readonly eventEpisodeStore = new Map<string, EventEpisode>();
  async saveEventEpisodes(episodes: readonly EventEpisode[]) {
    for (const e of episodes) this.eventEpisodeStore.set(`${e.userId}#${e.episodeId}`, structuredClone(e));
  }
  async eventEpisodes(userId: string, ids?: readonly string[]) {
    return [...this.eventEpisodeStore.values()]
      .filter((e) => e.userId === userId && (ids === undefined || ids.includes(e.episodeId)))
      .sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || a.episodeId.localeCompare(b.episodeId))
      .map((e) => structuredClone(e));
  }
  async getTurns(userId: string, ids: readonly number[]) {
    const turns = ids.map((id) => this.turns.get(`${userId}#${id}`)).filter((t): t is TurnSaved => t !== undefined);
    const missing = ids
      .filter((id) => !this.turns.has(`${userId}#${id}`))
      .map((turnId) => ({ turnId, reason: 'not in the turn index' }));
    return { turns, missing };
  }
}

export class MemoryEventPublisher implements AgentEventPublisher {
  readonly events: AgentEvent[] = [];
  async publish(events: readonly AgentEvent[]) {
    this.events.push(...events);
  }
}

export class MemoryClaimChecks implements ClaimCheckStore {
  readonly objects = new Map<string, string>();
  /** Keys whose fetch fails as S3 would when throttled (retryable). */
  readonly unavailable = new Set<string>();
  async fetch(key: string) {
    if (this.unavailable.has(key)) {
      const error = new Error('SlowDown');
      error.name = 'SlowDown';
      throw error;
    }
    const body = this.objects.get(key);
    if (body === undefined) {
      const error = new Error(`no claim ${key}`);
      error.name = 'NoSuchKey';
      throw error;
    }
    return body;
  }
}

export class MemoryRejectedLog implements RejectedEventLog {
  readonly kept: RejectedEvent[] = [];
  async keep(event: RejectedEvent) {
    this.kept.push(event);
  }
}

let nextTurn = 0;

/** A valid turn.saved event; override any field. */
export function turn(overrides: Partial<TurnSaved> = {}): TurnSaved {
  nextTurn += 1;
  return {
    type: 'turn.saved',
    version: 1,
    userId: 'user-1',
    sessionId: 's-1',
    turnId: nextTurn,
    timestamp: '2026-02-06T14:00:00Z',
    query: `question number ${nextTurn} about gardening`,
    response: 'an answer',
    ...overrides,
  };
}

const ddbKey = (userId: string, sk: string) => `${keys.ownerPk(userId)}|${sk}`;

export class RecordingTurnStore extends MemoryTurnStore {
  constructor(private readonly log: WriteLog) {
    super();
  }
  override async saveTurns(turns: readonly TurnSaved[], marked?: ReadonlyArray<{ userId: string; turnId: number }>) {
    for (const t of turns) {
      this.log.add('turns', t.userId, turnDocKey(t.userId, t.turnId, turnContentHash(t)));
      this.log.addItem('turns', t.userId, ddbKey(t.userId, keys.turnSk(t.turnId)), {
        ...t,
        query: undefined,
        response: undefined,
        context: undefined,
        text: turnSearchText(t),
      });
    }
    return super.saveTurns(turns, marked);
  }
  override async saveEventEpisodes(episodes: readonly EventEpisode[]) {
    for (const e of episodes)
      this.log.addItem('turns', e.userId, ddbKey(e.userId, keys.eventEpisodeSk(e.episodeId)), e);
    return super.saveEventEpisodes(episodes);
  }
  /** The turn index of a user, oldest first (what the catalog reads). */
  allTurnIndex(userId: string) {
    return [...this.turns.values()]
      .filter((t) => t.userId === userId)
      .sort((a, b) => a.turnId - b.turnId)
      .map(turnIndexEntry);
  }
}

export class RecordingRejectedLog extends MemoryRejectedLog {
  constructor(private readonly log: WriteLog) {
    super();
  }
  override async keep(event: RejectedEvent) {
    this.log.add('rejected', null, rejectedEventKey(event.receivedAt.slice(0, 10), event.source, event.messageId));
    return super.keep(event);
  }
}
