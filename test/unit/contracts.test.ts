import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JobSchema, TurnSavedSchema } from '../../events/index.js';
import { renderJsonSchemas } from '../../events/json-schema.js';

const read = (path: string) => readFileSync(new URL(`../../events/${path}`, import.meta.url), 'utf8');

describe('event contracts', () => {
  it('generated JSON Schemas are up to date with the zod schemas (run npm run schemas:generate)', () => {
    for (const { file, text } of renderJsonSchemas()) {
      expect(read(`schemas/${file}`), file).toBe(text);
    }
  });

  it('turn.saved keeps its fixed field names', () => {
    const schema = JSON.parse(read('schemas/turn.saved.v1.json'));
    expect(Object.keys(schema.properties).sort()).toEqual(
      [
        'attributes',
        'context',
        'episode',
        'query',
        'response',
        'sessionId',
        'signals',
        'sources',
        'timestamp',
        'turnId',
        'type',
        'userId',
        'version',
      ].sort(),
    );
    // Optional and additive: a publisher that never sends it is unaffected.
    expect(Object.keys(schema.properties.sources.items.properties).sort()).toEqual([
      'domain',
      'extractionQuality',
      'outcome',
    ]);
    expect(schema.required.sort()).toEqual(
      ['query', 'response', 'sessionId', 'timestamp', 'turnId', 'type', 'userId', 'version'].sort(),
    );
    expect(Object.keys(schema.properties.signals.properties).sort()).toEqual([
      'contradiction',
      'quality',
      'route',
      'validation',
    ]);
  });

  it('every sample parses against its schema', () => {
    expect(TurnSavedSchema.safeParse(JSON.parse(read('samples/turn.saved.json'))).success).toBe(true);
    expect(JobSchema.safeParse(JSON.parse(read('samples/reflector.job.json'))).success).toBe(true);
    const lines = read('samples/conversation.jsonl').split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThanOrEqual(20);
    for (const line of lines) expect(TurnSavedSchema.safeParse(JSON.parse(line)).success, line).toBe(true);
  });

  it.each([
    ['userId', { userId: 'a/b' }],
    ['userId', { userId: '..' }],
    ['userId', { userId: 'GLOBAL' }],
    ['userId', { userId: 'x'.repeat(129) }],
    ['turnId', { turnId: 0 }],
    ['turnId', { turnId: 1.5 }],
    ['timestamp', { timestamp: 'yesterday' }],
    ['signals.validation', { signals: { validation: 'MAYBE' } }],
    ['signals.quality', { signals: { quality: 1.2 } }],
    ['attributes.k', { attributes: { k: 3 } }],
    ['type', { type: 'turn.deleted' }],
  ])('rejects a bad %s and names the field', (field, patch) => {
    const sample = JSON.parse(read('samples/turn.saved.json'));
    const result = TurnSavedSchema.safeParse({ ...sample, ...patch });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.'))).toContain(field);
  });
});
