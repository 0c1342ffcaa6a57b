/**
 * Property: whatever arrives on the TurnQueue, ingestion never throws, every record is
 * either accepted, a duplicate, late, a control event or rejected-and-kept, and every
 * kept reject names at least one field.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import { ingestDeps } from '../helpers/use-case-deps.js';

const valid = {
  type: 'turn.saved',
  version: 1,
  userId: 'fuzz-user',
  sessionId: 's',
  turnId: 1,
  timestamp: '2026-02-06T14:00:00Z',
  query: 'q',
  response: 'r',
};

/** Malformed events: a valid one with one field replaced, removed or garbled, or arbitrary JSON. */
const malformed = fc.oneof(
  fc
    .record({ key: fc.constantFrom(...Object.keys(valid), 'signals', 'attributes', 'context'), value: fc.anything() })
    .map(({ key, value }) => JSON.stringify({ ...valid, [key]: value })),
  fc.constantFrom(...Object.keys(valid)).map((key) => {
    const copy: Record<string, unknown> = { ...valid };
    delete copy[key];
    return JSON.stringify(copy);
  }),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string(),
  fc
    .record({ signals: fc.anything(), attributes: fc.anything() })
    .map((extra) => JSON.stringify({ ...valid, ...extra })),
);

describe('ingestion under malformed input (fast-check)', () => {
  it('never crashes and keeps every reject with the failing field', async () => {
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(malformed, { minLength: 1, maxLength: 10 }), async (bodies) => {
        cases += bodies.length;
        const deps = ingestDeps();
        const r = await ingestTurns(
          bodies.map((body, i) => ({ messageId: `m${i}`, body })),
          deps,
        );
        expect(r.failedMessageIds).toEqual([]);
        expect(r.accepted + r.duplicates + r.late + r.controlEvents + r.alreadyApplied + r.rejected).toBe(
          bodies.length,
        );
        expect(deps.rejected.kept).toHaveLength(r.rejected);
        for (const kept of deps.rejected.kept) {
          expect(kept.errors.length).toBeGreaterThan(0);
          for (const e of kept.errors) expect(e.path).not.toBe('');
          expect(bodies).toContain(kept.body);
        }
      }),
      { numRuns: 300, seed: 20261122 },
    );
    expect(cases).toBeGreaterThanOrEqual(1000);
  });
});
