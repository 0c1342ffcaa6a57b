/**
 * Promotion's recurrence (req R-PRO: a staged item similar > 0.7 to a new one gains a
 * promotion) under rewording, both error kinds: a fact a model words again must
 * recur, a fact that merely shares the topic must not. Twelve general facts of our own (not
 * LoCoMo's), each with a rewording and a same-topic other fact, through findRecurrences.
 */
import { describe, expect, it } from 'vitest';
import { findRecurrences, type StagedRecord } from '../../lib/knowledge/promotion.js';
import type { StagedDocument } from '../../lib/knowledge/staging.js';

// [staged fact, the same fact reworded, another fact on the same topic]
const TRIPLES: Array<[string, string, string]> = [
  [
    "User works as a nurse at a children's hospital",
    'The user is a nurse working in a hospital for children',
    "User visited a children's hospital to donate toys",
  ],
  [
    'User has two daughters, aged 5 and 8',
    'User is the parent of two girls, 5 and 8 years old',
    "User's daughters started a new school this year",
  ],
  ['User is allergic to peanuts', 'User has a peanut allergy', 'User likes peanut butter cookies from the bakery'],
  [
    'User moved to Denver in March 2024',
    'In March 2024 the user relocated to Denver',
    'User plans a trip to Denver in March',
  ],
  [
    'User plays guitar in a local band on weekends',
    'On weekends the user plays the guitar with a band in town',
    'User bought a new guitar amplifier last week',
  ],
  [
    'User prefers tea over coffee in the morning',
    'In the mornings the user would rather drink tea than coffee',
    'User drinks coffee at work meetings',
  ],
  [
    'User ran a marathon in under four hours',
    'User finished a marathon in less than 4 hours',
    'User is training for a half marathon next spring',
  ],
  [
    "User's dog is a golden retriever named Max",
    "Max, the user's dog, is a golden retriever",
    "User walks the neighbor's dog every evening",
  ],
  [
    'User is learning Spanish for a job in Madrid',
    'User studies Spanish because of a new job in Madrid',
    'User watched a Spanish film last night',
  ],
  [
    'User volunteers at an animal shelter every Saturday',
    'Every Saturday the user volunteers at the animal shelter',
    'User adopted a cat from an animal shelter',
  ],
  [
    'User was diagnosed with type 2 diabetes last year',
    'Last year the user learned they have type 2 diabetes',
    "User's father manages his diabetes with diet",
  ],
  [
    'User bought a house with a big garden',
    'The user purchased a home that has a large garden',
    'User grows tomatoes in the garden',
  ],
];

const record = (text: string, i: number): StagedRecord => ({
  path: `Knowledge_staging/Facts/f${i}.md`,
  kind: 'fact',
  title: '',
  category: 'Facts',
  text,
  confidence: 0.7,
  sourceTurns: [i + 1],
  batchId: 'batch-1',
  stagedAt: '2026-01-01T00:00:00Z',
  meta: {},
  body: text,
  promotedBy: [],
  status: 'staged',
});
const fresh = (text: string, i: number) =>
  ({ path: `Knowledge_staging/Facts/n${i}.md`, kind: 'fact', title: '', text }) as unknown as StagedDocument;

/** How many of the later statements findRecurrences takes as a recurrence of their own staged fact. */
function recurrences(pick: (t: [string, string, string]) => string): number {
  const staged = TRIPLES.map(([fact], i) => record(fact, i));
  const { reinforcements } = findRecurrences(
    staged,
    TRIPLES.map((t, i) => fresh(pick(t), i)),
    'batch-2',
  );
  // Statement n{i} recurs rightly only as staged fact f{i}.
  return reinforcements.filter((r) => r.staged.path === r.doc.path.replace('/n', '/f')).length;
}

describe('promotion under rewording', () => {
  it('recognises 5 of 12 rewordings (4 on plain words) and takes none of 12 same-topic facts as a recurrence', () => {
    expect(recurrences(([, same]) => same)).toBe(5);
    expect(recurrences(([, , other]) => other)).toBe(0);
  });
});
