/**
 * Tombstones (req R-DEL-2): what a deleted fact leaves behind so that the reflector and the
 * nightly run do not bring it back. No content is kept: a tombstone is two keys, each a
 * SHA-256 of a normalised form of the fact — its title, and its text's words — the title's
 * carrying a hash of each of the text's content words. A fact proposed again is recognised by
 * the same words (in any order, case or punctuation; numbers count), or by the same title
 * saying no content word the deleted fact did not say (a rephrasing, a part of it, other
 * numbers). The same title with a content word the deleted fact lacked is a new statement — a
 * corrected value — and passes: a person who deleted a wrong fact must not stop the right one
 * from being learnt. Nobody can read the fact back from the
 * hashes, short of guessing its words.
 */
import { createHash } from 'node:crypto';
import { contentWords, isStopword, words } from '../kernel/text.js';

/** What a fact is recognised by. */
export interface Buryable {
  title: string;
  text: string;
}

const hash = (kind: string, value: string) =>
  `${kind}:${createHash('sha256').update(value).digest('hex').slice(0, 32)}`;

/** A title as a fact's identity: lower case, letters and digits only (`Reef_tank.md` and `reef tank` are one title). */
export const normaliseTitle = (title: string): string =>
  title
    .replace(/\.md$/i, '')
    .replace(/^.*\//, '')
    .toLowerCase()
    .normalize('NFKC')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/**
 * The words that make a fact what it is: not stop words, but numbers too (unlike search's
 * content words), so "holds 75 gallons" is not "holds 40 gallons".
 */
const factWords = (text: string): string[] =>
  words(text).filter((w) => !isStopword(w) && (w.length >= 3 || /\d/.test(w)));

/** A text as a fact's identity: its words, each once, sorted (order, case, stop words and punctuation do not count). */
export const normaliseText = (text: string): string => [...new Set(factWords(text))].sort().join(' ');

/** One key of a deleted fact; a title's carries its text's content words, hashed (sorted, each once). */
export interface Tombstone {
  key: string;
  words?: string[] | undefined;
}

const wordHash = (word: string) => createHash('sha256').update(`word:${word}`).digest('hex').slice(0, 12);

/** What a fact is buried as: its title's key (with its words) and its text's (an empty one gives no key). */
export function tombstonesOf(fact: Buryable): Tombstone[] {
  const title = normaliseTitle(fact.title);
  const text = normaliseText(fact.text);
  // Numbers left out (search's content words): a fact citing another turn or date is still the fact.
  const words = [...new Set(contentWords(fact.text).map(wordHash))].sort();
  return [
    ...(title.length >= 3 ? [{ key: hash('title', title), words }] : []),
    ...(text.length > 0 ? [{ key: hash('text', text) }] : []),
  ];
}

/** The keys a fact is looked up by. */
export const tombstoneKeys = (fact: Buryable): string[] => tombstonesOf(fact).map((t) => t.key);

/**
 * The key by which `fact` repeats a buried one, or null: its text's words, or its title with no
 * word the buried fact lacked (a tombstone without words, the title alone).
 */
export function buriedKeyOf(fact: Buryable, buried: ReadonlyMap<string, Tombstone>): string | null {
  for (const stone of tombstonesOf(fact)) {
    const found = buried.get(stone.key);
    if (!found) continue;
    if (!stone.key.startsWith('title:') || !found.words) return stone.key;
    const said = new Set(found.words);
    if ((stone.words ?? []).every((w) => said.has(w))) return stone.key;
  }
  return null;
}
