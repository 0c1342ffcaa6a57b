/**
 * Req R-CAND-2 (seed 002 §7, guidelines for memory candidates: "Never transient data (prices,
 * URLs, ephemeral task state)"). What code can tell by a text's form, in any language: a URL
 * and a price. Ephemeral task state has no form to check; the prompts ask for durable facts.
 *
 * Dropping a price drops a personal fact with it ("paid $300 for the tickets"): the seed's rule,
 * taken as written. The turn that said it is still indexed and searchable.
 */

/** A scheme and `://` (http, https, ftp, s3, …), or a host written from `www.`. */
const URL_FORM = /\b(?:[a-z][a-z0-9+.-]*:\/\/|www\.)[^\s<>"')\]]*[^\s<>"')\].,;:!?]/iu;

/**
 * An amount with a currency: a currency symbol (Unicode category Sc: $ € £ ¥ ₹ …) beside a
 * number, or a number beside the ISO 4217 code of a widely used currency.
 */
const PRICE_FORM =
  /\p{Sc}\s?\d|\d\s?\p{Sc}|\b(?:USD|EUR|GBP|JPY|CNY|CHF|CAD|AUD|INR|HKD|SGD)\s?\d|\d\s?(?:USD|EUR|GBP|JPY|CNY|CHF|CAD|AUD|INR|HKD|SGD)\b/u;

export interface TransientData {
  form: 'URL' | 'price';
  /** The URL, or the words around the price: for a reviewer, not for a log or the audit trail (they are the user's words). */
  excerpt: string;
}

/** What in a candidate's text is transient, or undefined when nothing is. */
export function transientData(text: string): TransientData | undefined {
  const url = URL_FORM.exec(text);
  if (url) return { form: 'URL', excerpt: url[0].slice(0, 80) };
  const price = PRICE_FORM.exec(text);
  if (price) return { form: 'price', excerpt: text.slice(Math.max(0, price.index - 20), price.index + 20).trim() };
  return undefined;
}
