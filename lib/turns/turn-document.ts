/**
 * The turn document: one markdown file per turn (req R-ASM-2's context.md), front matter for
 * metadata and one section each for the query, the gathered context and the response.
 */
import { createHash } from 'node:crypto';
import type { TurnSaved } from '../../events/turn-saved.js';
import { episodeText, summariseEpisode } from './episodes.js';
import { parseFrontMatter, renderFrontMatter } from '../kernel/front-matter.js';
import type { TurnIndexEntry } from '../items/source-items.js';

const SECTIONS = ['Query', 'Context', 'Response'] as const;
const HEADING = /^## (Query|Context|Response)$/;

/** Lines of the text that look like our section headings are escaped as markdown does: `\## `. */
const escapeHeadings = (text: string) =>
  text
    .split('\n')
    .map((l) => (HEADING.test(l) || /^\\+## (Query|Context|Response)$/.test(l) ? `\\${l}` : l))
    .join('\n');
const unescapeHeadings = (text: string) =>
  text
    .split('\n')
    .map((l) => (/^\\+## (Query|Context|Response)$/.test(l) ? l.slice(1) : l))
    .join('\n');

export function renderTurnDocument(turn: TurnSaved): string {
  const meta = {
    type: turn.type,
    version: turn.version,
    userId: turn.userId,
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    timestamp: turn.timestamp,
    ...(turn.signals ? { signals: turn.signals } : {}),
    ...(turn.attributes ? { attributes: turn.attributes } : {}),
    ...(turn.sources ? { sources: turn.sources } : {}),
    ...(turn.episode ? { episode: turn.episode } : {}),
  };
  const parts = [`## Query\n${escapeHeadings(turn.query)}`];
  if (turn.context !== undefined) parts.push(`## Context\n${escapeHeadings(turn.context)}`);
  parts.push(`## Response\n${escapeHeadings(turn.response)}`);
  return renderFrontMatter(meta, `${parts.join('\n\n')}\n`);
}

/** Inverse of renderTurnDocument; the result is validated by the caller's schema. */
export function parseTurnDocument(text: string): Record<string, unknown> {
  const { meta, body } = parseFrontMatter(text);
  const sections: Partial<Record<(typeof SECTIONS)[number], string[]>> = {};
  let current: (typeof SECTIONS)[number] | null = null;
  for (const line of body.split('\n')) {
    const m = HEADING.exec(line);
    if (m) {
      current = m[1] as (typeof SECTIONS)[number];
      sections[current] = [];
    } else if (current) sections[current]?.push(line);
  }
  const text_ = (name: (typeof SECTIONS)[number]) => {
    const lines = sections[name];
    if (!lines) return undefined;
    return unescapeHeadings(lines.join('\n').replace(/\n+$/, ''));
  };
  const context = text_('Context');
  return {
    ...meta,
    query: text_('Query') ?? '',
    response: text_('Response') ?? '',
    ...(context !== undefined ? { context } : {}),
  };
}

/** Stable content hash of a turn's payload (what a duplicate must equal to be the same turn). */
export function turnContentHash(turn: TurnSaved): string {
  // Parts added to the contract later join only when present, so earlier turns keep their hash.
  const canonical = JSON.stringify([
    turn.userId,
    turn.sessionId,
    turn.turnId,
    turn.timestamp,
    turn.query,
    turn.response,
    turn.context ?? null,
    turn.signals ?? null,
    turn.attributes ?? null,
    ...(turn.sources ? [{ sources: turn.sources }] : []),
    ...(turn.episode ? [{ episode: turn.episode }] : []),
  ]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

/**
 * Largest turn document (UTF-8 bytes) kept inline in its turn index item instead of as an S3
 * object (one durable write per turn). The break-even: a 1 KB DynamoDB write unit
 * costs $0.625 per million and an S3 PUT $5 per million, so up to ~8 KB of document a PUT is
 * the dearer write; at 4 KB the largest inline turn adds 4 write units ($2.50 per million)
 * and its month in DynamoDB ($0.25/GB) stays under a PUT's price for months. Larger turns
 * (and every claim-checked one, over 256 KB) go to S3 as before, where the archival rule
 * moves those over 128 KB to a colder class.
 */
export const INLINE_TURN_MAX_BYTES = 4096;

/** The turn's document as stored: inline in the index when small enough, else an S3 object. */
export function turnDocumentPlacement(turn: TurnSaved): { body: string; inline: boolean } {
  const body = renderTurnDocument(turn);
  return { body, inline: Buffer.byteLength(body, 'utf8') <= INLINE_TURN_MAX_BYTES };
}

/** The characters of a turn kept in the index for search (about 1 KiB of DynamoDB item). */
export const TURN_SEARCH_TEXT_CHARS = 1500;

/** What search sees of a turn: the user's words, then the agent's, capped. */
export function turnSearchText(turn: Pick<TurnSaved, 'query' | 'response' | 'episode'>): string {
  const text = `${turn.query}\n${turn.response}${turn.episode ? `\n${episodeText(turn.episode)}` : ''}`;
  return text.length <= TURN_SEARCH_TEXT_CHARS ? text : `${text.slice(0, TURN_SEARCH_TEXT_CHARS - 1)}…`;
}

/** A turn's entry in the turn index: what search and the episode views read without the document. */
export function turnIndexEntry(turn: TurnSaved): TurnIndexEntry {
  return {
    userId: turn.userId,
    turnId: turn.turnId,
    sessionId: turn.sessionId,
    timestamp: turn.timestamp,
    text: turnSearchText(turn),
    validation: turn.signals?.validation,
    quality: turn.signals?.quality,
    attributes: turn.attributes,
    ...(turn.episode ? { episode: summariseEpisode(turn.episode) } : {}),
  };
}
