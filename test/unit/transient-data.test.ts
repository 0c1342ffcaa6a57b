import { describe, expect, it } from 'vitest';
import { transientData } from '../../lib/kernel/transient-data.js';

describe('transient data by its form (req R-CAND-2)', () => {
  it('finds a URL by its scheme or its www. host', () => {
    expect(transientData('Notes are at https://docs.example.org/a?b=1.')).toEqual({
      form: 'URL',
      excerpt: 'https://docs.example.org/a?b=1',
    });
    expect(transientData('the bucket s3://team-notes/2026/plan')?.excerpt).toBe('s3://team-notes/2026/plan');
    expect(transientData('she reads www.example.com daily')).toEqual({ form: 'URL', excerpt: 'www.example.com' });
  });

  it('finds a price by a currency symbol or a currency code beside a number, in any order', () => {
    for (const text of [
      'paid $300 for the tickets',
      'kostet 12,50 € im Laden',
      '¥ 1200 a night',
      'about 80 EUR',
      'USD 15 a month',
      'a ₹500 note',
    ])
      expect(transientData(text), text).toEqual({ form: 'price', excerpt: expect.stringMatching(/\d/) });
  });

  it('leaves numbers without a currency, versions, times and domains in prose alone', () => {
    for (const text of [
      'Caroline has 3 kids and runs 10 km on Sundays',
      'moved to version 2.0 of the app at 5pm',
      'works toward ISO 9001 at a 20% discount',
      'the site example.com blocks scrapers',
      'USDA organic food only',
      'her email is on file',
    ])
      expect(transientData(text), text).toBeUndefined();
  });
});
