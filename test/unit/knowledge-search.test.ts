import { describe, expect, it } from 'vitest';
import { KnowledgeSearch } from '../../lib/knowledge/knowledge-search.js';

const doc = (id: string, text: string) => ({ id, title: id.replace(/\.md$/, ''), text });

describe('knowledge search (BM25 via MiniSearch)', () => {
  const index = new KnowledgeSearch([
    doc('Facts/reef_tank.md', 'The user keeps a 40 gallon reef tank with two clownfish and soft corals.'),
    doc('Facts/dog.md', 'The user adopted a beagle named Rex who loves long walks.'),
    doc('Patterns/hiking.md', 'The user goes hiking in the Alps every summer.'),
  ]);

  it('finds documents by keywords, best first', () => {
    const hits = index.search('clownfish corals lighting');
    expect(hits[0]?.doc.id).toBe('Facts/reef_tank.md');
    expect(hits.map((h) => h.doc.id)).not.toContain('Facts/dog.md');
  });

  it('scores a near copy close to 1, a related text in between, and an unrelated one 0', () => {
    const copy = index.similar('The user keeps a 40 gallon reef tank with two clownfish and soft corals.');
    expect(copy[0]?.doc.id).toBe('Facts/reef_tank.md');
    expect(copy[0]?.similarity).toBeGreaterThan(0.9);
    const related = index.similar('The user bought new lights for the reef tank.');
    const tank = related.find((r) => r.doc.id === 'Facts/reef_tank.md');
    expect(tank?.similarity).toBeGreaterThan(0.1);
    expect(tank?.similarity).toBeLessThan(0.8);
    expect(index.similar('Quarterly tax filing deadlines')).toEqual([]);
  });

  it('leaves no trace of the candidates it compared', () => {
    for (let i = 0; i < 5; i++) index.similar('reef tank clownfish');
    expect(index.size).toBe(3);
    expect(index.search('clownfish')).toHaveLength(1);
  });

  it('replaces a document added again under the same id', () => {
    const i = new KnowledgeSearch([doc('a.md', 'apples')]);
    i.add(doc('a.md', 'bananas'));
    expect(i.search('apples')).toEqual([]);
    expect(i.search('bananas')).toHaveLength(1);
  });
});
