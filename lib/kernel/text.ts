/**
 * Small, dependency-free text helpers shared by the domain: tokenising for keyword
 * evidence and topic overlap, and the token estimate used for prompt budgets.
 */

const STOPWORDS = new Set(
  `a about above after again against all also am an and any are aren't as at be because been before being
  below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during
  each few for from further get got had hadn't has hasn't have haven't having he he'd he'll he's her here here's
  hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself just let's
  like me more most mustn't my myself no nor not now of off on once only or other ought our ours ourselves out
  over own really same shan't she she'd she'll she's should shouldn't so some such than that that's the their
  theirs them themselves then there there's these they they'd they'll they're they've this those through to too
  under until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
  which while who who's whom why why's will with won't would wouldn't yeah yes you you'd you'll you're you've
  your yours yourself yourselves oh ok okay hey hi hello thanks thank sure wow great good well much lot lots
  one two thing things something anything know think going go gonna want really actually also even still
  make made way time day days see say said tell told`.split(/\s+/),
);

export const isStopword = (word: string): boolean => STOPWORDS.has(word);

/** Lower-cased word tokens (letters, digits, inner apostrophes and hyphens). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? [];
}

/** Content words: tokens of 3+ characters that are not stopwords, apostrophes normalised. */
export function contentWords(text: string): string[] {
  return words(text)
    .map((w) => w.replace(/’/g, "'"))
    .filter((w) => w.length >= 3 && !STOPWORDS.has(w) && !/^\d+$/.test(w));
}

/** The `limit` most frequent content words of a text, ties broken by first appearance. */
export function topKeywords(text: string, limit: number): string[] {
  const counts = new Map<string, number>();
  for (const w of contentWords(text)) counts.set(w, (counts.get(w) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([w]) => w);
}

/**
 * Token estimate for prompt budgets: one token per 4 characters, rounded up.
 * It is the rule of thumb Bedrock's model cards give for English; it over-counts
 * code slightly and under-counts non-Latin scripts, which the budget's margin absorbs.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** A file-name-safe slug: lower case, `a-z0-9_`, at most 80 chars, never empty. */
export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 80)
    .replace(/_+$/g, '');
  return slug.length > 0 ? slug : 'untitled';
}
