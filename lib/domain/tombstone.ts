/**
 * Tombstones (req R-DEL-2): what a deleted fact leaves behind so that the reflector and the
 * nightly run do not bring it back. No content is kept: a tombstone is a set of keys, each a
 * SHA-256 of a normalised form of the fact — its title, and its text's words — so a model
 * proposing the same fact again (the same title, or the same words in any order, case or
 * punctuation) is recognised, while nobody can read the fact back from the tombstone.
 */
import { createHash } from 'node:crypto';
import { contentWords } from './text.js';

/** What a fact is recognised by. */
export interface Buryable {
  title: string;
  text: string;
}

const hash = (kind: string, value: string) => `${kind}:${createHash('sha256').update(value).digest('hex').slice(0, 32)}`;

/** A title as a fact's identity: lower case, letters and digits only (`Reef_tank.md` and `reef tank` are one title). */
export const normaliseTitle = (title: string): string =>
  title
    .replace(/\.md$/i, '')
    .replace(/^.*\//, '')
    .toLowerCase()
    .normalize('NFKC')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** A text as a fact's identity: its content words, each once, sorted (order, case, stop words and punctuation do not count). */
export const normaliseText = (text: string): string => [...new Set(contentWords(text))].sort().join(' ');

/** The keys a fact is buried and found by: its title's and its text's (an empty one gives no key). */
export function tombstoneKeys(fact: Buryable): string[] {
  const title = normaliseTitle(fact.title);
  const text = normaliseText(fact.text);
  return [...(title.length >= 3 ? [hash('title', title)] : []), ...(text.length > 0 ? [hash('text', text)] : [])];
}

/** The first key of `fact` among the buried ones, or null. */
export function buriedKeyOf(fact: Buryable, buried: ReadonlySet<string>): string | null {
  return tombstoneKeys(fact).find((k) => buried.has(k)) ?? null;
}
