/**
 * Estimated model cost per call, so "under $1/day for all agents" (req R-SLP-14) is a query.
 * Published on-demand prices in us-east-1, USD per million tokens, as of 2026-11 (check
 * https://aws.amazon.com/bedrock/pricing/ before relying on them). Matched by the model id
 * with any cross-region prefix (`us.`, `eu.`, `global.`) removed; unknown ids cost null.
 */
export const PRICES_AS_OF = '2026-11-01';

/**
 * A batch inference job's tokens cost about half the on-demand price
 * (https://aws.amazon.com/bedrock/pricing/, "Batch"; docs/pricing-sources.md).
 */
export const BATCH_PRICE_FACTOR = 0.5;

const PRICES: Array<{ match: RegExp; input: number; output: number }> = [
  { match: /^offline\./, input: 0, output: 0 },
  { match: /^anthropic\.claude-haiku-4-5/, input: 1.0, output: 5.0 },
  { match: /^anthropic\.claude-3-5-haiku/, input: 0.8, output: 4.0 },
  { match: /^anthropic\.claude-3-haiku/, input: 0.25, output: 1.25 },
  { match: /^anthropic\.claude-sonnet-4/, input: 3.0, output: 15.0 },
  { match: /^anthropic\.claude-3-(5|7)-sonnet/, input: 3.0, output: 15.0 },
  { match: /^amazon\.nova-micro/, input: 0.035, output: 0.14 },
  { match: /^amazon\.nova-lite/, input: 0.06, output: 0.24 },
  { match: /^amazon\.nova-pro/, input: 0.8, output: 3.2 },
];

export function estimateCostUsd(modelId: string, inputTokens: number, outputTokens: number): number | null {
  const id = modelId.replace(/^(us|eu|apac|global)\./, '');
  const price = PRICES.find((p) => p.match.test(id));
  if (!price) return null;
  return Math.round(((inputTokens * price.input + outputTokens * price.output) / 1e6) * 1e6) / 1e6;
}
