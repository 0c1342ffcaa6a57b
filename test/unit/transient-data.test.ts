import { describe, expect, it } from 'vitest';
import { transientData } from '../../lib/kernel/transient-data.js';

describe('transient data by its form (req R-CAND-2)', () => {
  it('finds a URL by its scheme or its www. host', () => {
    expect(transientData('Notes are at https://docs.example.org/a?b=1.')).toBe(
      'a URL (https://docs.example.org/a?b=1)',
    );
    expect(transientData('the bucket s3://team-notes/2026/plan')).toMatch(/^a URL \(s3:\/\//);
    expect(transientData('she reads www.example.com daily')).toBe('a URL (www.example.com)');
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
      expect(transientData(text), text).toMatch(/^a price \(/);
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
