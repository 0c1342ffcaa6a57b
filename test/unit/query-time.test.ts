/** The time a query names (the time lever): chrono's reading of it as a window. */
import { describe, expect, it } from 'vitest';
import { queryTimeWindow } from '../../lib/search/query-time.js';

const now = new Date('2024-03-10T15:00:00Z');
const iso = (w: { from: number; to: number } | null) =>
  w && { from: new Date(w.from).toISOString(), to: new Date(w.to).toISOString() };

describe('queryTimeWindow', () => {
  it('reads a named day as that day, a day either side for time zones', () => {
    expect(iso(queryTimeWindow('What did she start on 3 June, 2023?', now))).toEqual({
      from: '2023-06-02T00:00:00.000Z',
      to: '2023-06-05T00:00:00.000Z',
    });
    expect(iso(queryTimeWindow('what did we decide yesterday', now))).toEqual({
      from: '2024-03-08T00:00:00.000Z',
      to: '2024-03-11T00:00:00.000Z',
    });
  });

  it('reads a month as the month, and a month without a year as its last one before now', () => {
    expect(iso(queryTimeWindow('What did he achieve in January 2022?', now))).toEqual({
      from: '2022-01-01T00:00:00.000Z',
      to: '2022-02-01T00:00:00.000Z',
    });
    expect(iso(queryTimeWindow('where did we go in May?', now))).toEqual({
      from: '2023-05-01T00:00:00.000Z',
      to: '2023-06-01T00:00:00.000Z',
    });
  });

  it('spans every date a query names', () => {
    expect(iso(queryTimeWindow('Where was he between August 11 and August 15 2023?', now))).toEqual({
      from: '2023-08-10T00:00:00.000Z',
      to: '2023-08-17T00:00:00.000Z',
    });
  });

  it('reads a weekday as its last day before now', () => {
    expect(iso(queryTimeWindow('What did we plan on Monday?', now))).toEqual({
      from: '2024-03-03T00:00:00.000Z',
      to: '2024-03-06T00:00:00.000Z',
    });
  });

  it('names no window when the query names no time, a time of day alone, or a word that is also a date', () => {
    expect(queryTimeWindow('When did she paint a sunrise?', now)).toBeNull();
    expect(queryTimeWindow('How many children does she have?', now)).toBeNull();
    expect(queryTimeWindow('What did she do at 5pm?', now)).toBeNull();
    expect(queryTimeWindow('Did they march for equality?', now)).toBeNull();
    expect(queryTimeWindow('When is the sun setting?', now)).toBeNull();
  });
});
