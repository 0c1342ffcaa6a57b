/**
 * Source reliability (req R-SRC): which sites succeed, which block requests, how well
 * their content extracts — tracked per domain for all users together, since reliability is
 * a property of the site, not of the user. Turns report the sources they used
 * (`turn.saved` `sources`); the signal function adds each report to its domain's counts
 * once; the memory API serves the result, and staged documents whose turns cite sources
 * carry it in their confidence ("the source quality scoring blend").
 *
 * The seed gives no formula; ours (the numbers are here, nowhere else):
 * - success rate with a uniform prior: (successes + 1) / (attempts + 2) — a site nobody has
 *   used scores 0.5, and one outcome moves it only part of the way;
 * - extraction quality: the mean of the qualities reported with successes, with one
 *   imagined perfect extraction as prior — a site only loses for quality it was seen to lack;
 * - reliability = success rate × extraction quality; 0.5 for an unknown site;
 * - advice for an agent's source selection: `avoid` below 0.3 and `prefer` from 0.7, each
 *   only after MIN_ATTEMPTS_FOR_ADVICE outcomes; `neutral` otherwise;
 * - a document's confidence moves by BLEND_WEIGHT × (mean reliability of its sources − 0.5),
 *   so at most ±0.1: good sources raise it, poor ones lower it, unknown ones leave it.
 */
import type { SourceOutcome, TurnSaved } from '../../events/turn-saved.js';

export interface SourceStats {
  domain: string;
  attempts: number;
  successes: number;
  blocked: number;
  failed: number;
  /** Sum and count of the extraction qualities reported with successes. */
  qualitySum: number;
  qualityCount: number;
  /** When the turn of the outcome counted last was reported (a late turn's time may be older). */
  lastOutcomeAt: string | null;
}

export type SourceAdvice = 'prefer' | 'neutral' | 'avoid';

export interface SourceReliability extends SourceStats {
  successRate: number;
  extractionQuality: number;
  reliability: number;
  advice: SourceAdvice;
}

/** One source outcome of one turn; `key` (turn id and position) makes counting it idempotent. */
export interface SourceObservation {
  domain: string;
  outcome: SourceOutcome;
  quality?: number;
  key: string;
  at: string;
}

export const NEUTRAL_RELIABILITY = 0.5;
export const MIN_ATTEMPTS_FOR_ADVICE = 5;
export const AVOID_BELOW = 0.3;
export const PREFER_FROM = 0.7;
export const BLEND_WEIGHT = 0.2;

const round2 = (n: number) => Math.round(n * 100) / 100;

/** The domain outcomes are counted under: lower case, without a leading `www.`. */
export function normaliseDomain(domain: string): string {
  const d = domain.toLowerCase();
  return d.startsWith('www.') && d.length > 4 ? d.slice(4) : d;
}

/** The observations a turn reports, one per source, keyed by turn and position. */
export function observationsOf(turn: Pick<TurnSaved, 'turnId' | 'timestamp' | 'sources'>): SourceObservation[] {
  return (turn.sources ?? []).map((s, i) => ({
    domain: normaliseDomain(s.domain),
    outcome: s.outcome,
    ...(s.outcome === 'success' && s.extractionQuality !== undefined ? { quality: s.extractionQuality } : {}),
    key: `${turn.turnId}#${i}`,
    at: turn.timestamp,
  }));
}

export function emptyStats(domain: string): SourceStats {
  return {
    domain,
    attempts: 0,
    successes: 0,
    blocked: 0,
    failed: 0,
    qualitySum: 0,
    qualityCount: 0,
    lastOutcomeAt: null,
  };
}

/** Counts after one more observation (what the store adds atomically). */
export function addObservation(stats: SourceStats, o: SourceObservation): SourceStats {
  return {
    ...stats,
    attempts: stats.attempts + 1,
    successes: stats.successes + (o.outcome === 'success' ? 1 : 0),
    blocked: stats.blocked + (o.outcome === 'blocked' ? 1 : 0),
    failed: stats.failed + (o.outcome === 'failed' ? 1 : 0),
    qualitySum: stats.qualitySum + (o.quality ?? 0),
    qualityCount: stats.qualityCount + (o.quality !== undefined ? 1 : 0),
    lastOutcomeAt: o.at,
  };
}

export function reliabilityOf(stats: SourceStats): SourceReliability {
  const successRate = (stats.successes + 1) / (stats.attempts + 2);
  const extractionQuality = (stats.qualitySum + 1) / (stats.qualityCount + 1);
  const reliability = successRate * extractionQuality;
  const advice: SourceAdvice =
    stats.attempts < MIN_ATTEMPTS_FOR_ADVICE
      ? 'neutral'
      : reliability < AVOID_BELOW
        ? 'avoid'
        : reliability >= PREFER_FROM
          ? 'prefer'
          : 'neutral';
  return {
    ...stats,
    successRate: round2(successRate),
    extractionQuality: round2(extractionQuality),
    reliability: round2(reliability),
    advice,
  };
}

/** A document's confidence with its sources' reliability blended in (unchanged without sources). */
export function blendSourceReliability(confidence: number, reliabilities: readonly number[]): number {
  if (reliabilities.length === 0) return confidence;
  const mean = reliabilities.reduce((a, b) => a + b, 0) / reliabilities.length;
  return round2(Math.min(1, Math.max(0, confidence + BLEND_WEIGHT * (mean - NEUTRAL_RELIABILITY))));
}
