/** What the memory learned about sources and capabilities (req R-SRC and 004 P3-M4). */
import { normaliseDomain, reliabilityOf, type SourceReliability } from '../sources/source-reliability.js';
import { type CapabilityConfidence, capabilityConfidence, summariseEpisode } from '../turns/episodes.js';
import type { MemoryApiDeps } from './deps.js';

/**
 * Req R-SRC: how reliable these domains have been as sources — counts, success rate,
 * extraction quality, reliability and advice — from every user's reported outcomes. Domains
 * are normalised (lower case, no `www.`); one nobody reported gets the neutral prior.
 */
export async function sourceReliability(
  deps: MemoryApiDeps,
  domains: string,
): Promise<{ sources: SourceReliability[] }> {
  const wanted = [...new Set(domains.split(',').map((d) => normaliseDomain(d.trim())))];
  return { sources: (await deps.sources.stats(wanted)).map(reliabilityOf) };
}

/** Req R-EPI: how well each capability has worked for this user, from their episodes (turns' and agent.events'). */
export async function capabilities(
  deps: MemoryApiDeps,
  userId: string,
): Promise<{ capabilities: CapabilityConfidence[] }> {
  const [entries, events] = await Promise.all([deps.turns.episodes(userId), deps.turns.eventEpisodes(userId)]);
  return {
    capabilities: capabilityConfidence([
      ...entries.flatMap((e) => (e.episode ? [{ turnId: e.turnId, timestamp: e.timestamp, episode: e.episode }] : [])),
      ...events.map((e) => ({ episodeId: e.episodeId, timestamp: e.timestamp, episode: summariseEpisode(e.episode) })),
    ]),
  };
}
