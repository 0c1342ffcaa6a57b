/**
 * The words of a search segment and of a query, as terms. Tokens are exactly what the MiniSearch
 * index used (knowledge-search.ts): `words` with underscores as spaces; a term is a token of 2+
 * characters that is not a stopword, Porter stemmed; a field's length is its count of distinct
 * raw tokens (MiniSearch's rule). The vectors for the similarity leave out all-digit terms, as
 * KnowledgeSearch does.
 */
import { stemmer } from 'stemmer';
import { formsOf } from '../kernel/irregular-forms.js';
import { isStopword, words } from '../kernel/text.js';

export const rawTokens = (text: string): string[] => words(text.replace(/_/g, ' '));
export const termOf = (token: string): string | null => (token.length < 2 || isStopword(token) ? null : stemmer(token));

/**
 * The query's words as groups of terms, in order, repeats kept (MiniSearch scores a repeated
 * word twice): each word's own term first, then those of its other irregular forms
 * (irregular-forms.ts), which count as that word in the ranking.
 */
export const queryTermGroups = (query: string): string[][] =>
  rawTokens(query).flatMap((t) => {
    const own = termOf(t);
    return own === null ? [] : [[...new Set([own, ...formsOf(t).flatMap((f) => termOf(f) ?? [])])]];
  });

/** The terms of a text for its similarity vector: no all-digit terms (KnowledgeSearch's rule). */
export const vectorTerms = (text: string): string[] =>
  rawTokens(text).flatMap((t) => (/^\d+$/.test(t) ? [] : (termOf(t) ?? [])));
