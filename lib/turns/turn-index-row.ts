/** A turn index item, and an event episode's item, as the entries search and jobs read (lib/turns/dynamo-turn-store.adapter.ts writes them). */
import type { Episode } from '../../events/episode.js';
import type { EventEpisode, EpisodeSummary } from './episodes.js';
import { parseTurnDocument, turnSearchText } from './turn-document.js';
import type { TurnIndexEntry } from '../items/source-items.js';

/**
 * A turn's words for search: kept in the item when its document is in S3, else from its
 * inline document; entries written before the index kept the words have their summary.
 */
function searchTextOf(i: Record<string, unknown>): string {
  if (typeof i.text === 'string') return i.text;
  if (typeof i.doc === 'string') {
    const turn = parseTurnDocument(i.doc);
    return turnSearchText({
      query: String(turn.query ?? ''),
      response: String(turn.response ?? ''),
      ...(turn.episode ? { episode: turn.episode as Episode } : {}),
    });
  }
  return String(i.summary ?? '');
}

/** A turn index item as the entry search and jobs read. */
export function toIndexEntry(i: Record<string, unknown>): TurnIndexEntry {
  return {
    userId: String(i.userId),
    turnId: Number(i.turnId),
    sessionId: String(i.sessionId ?? ''),
    timestamp: String(i.timestamp ?? ''),
    text: searchTextOf(i),
    validation: typeof i.validation === 'string' ? i.validation : undefined,
    quality: typeof i.quality === 'number' ? i.quality : undefined,
    attributes: (i.attributes as Record<string, string> | undefined) ?? undefined,
    ...(i.episode ? { episode: i.episode as EpisodeSummary } : {}),
  };
}

export function toEventEpisode(i: Record<string, unknown>): EventEpisode {
  return {
    userId: String(i.userId),
    episodeId: String(i.episodeId),
    timestamp: String(i.timestamp ?? ''),
    trigger: i.trigger as EventEpisode['trigger'],
    ...(typeof i.sessionId === 'string' ? { sessionId: i.sessionId } : {}),
    ...(typeof i.turnId === 'number' ? { turnId: i.turnId } : {}),
    ...(typeof i.detail === 'string' ? { detail: i.detail } : {}),
    episode: JSON.parse(String(i.episode)) as Episode,
  };
}
