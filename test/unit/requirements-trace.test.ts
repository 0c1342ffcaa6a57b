/**
 * docs/requirements.md traces every rule of the specifications to the module that carries it
 * and the test that checks it. This keeps the trace true: every file it names exists, and
 * every test it quotes (`unit/x` "title") is a title in that test file.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const DOC = readFileSync(`${ROOT}docs/requirements.md`, 'utf8');

/** A quoted title as written in a test file, whose quotes may be escaped. */
const withPlainQuotes = (source: string): string => source.replace(/\\(['"`])/g, '$1');

describe('docs/requirements.md', () => {
  it('names only files that exist', () => {
    const cited = [
      ...DOC.matchAll(/`((?:lib|functions|infra|events|bench|scripts|test)\/[^`\s]+?\.(?:ts|js|json|html|mjs))`/g),
    ].map((m) => m[1] ?? '');
    expect(cited.length).toBeGreaterThan(50);
    expect(cited.filter((path) => path !== 'test/unit/x.test.ts' && !existsSync(`${ROOT}${path}`))).toEqual([]);
  });

  it('quotes only test titles that its test files hold', () => {
    const cites = [...DOC.matchAll(/`((?:unit|integration|e2e|infra)\/[\w.-]+)`\s+((?:"[^"]+"(?:[;,]\s*)?)+)/g)];
    const missing: string[] = [];
    let titles = 0;
    for (const [, file, quoted] of cites) {
      const path = `${ROOT}test/${file}.test.ts`;
      const source = existsSync(path) ? withPlainQuotes(readFileSync(path, 'utf8')) : '';
      for (const [, title] of (quoted ?? '').matchAll(/"([^"]+)"/g)) {
        titles += 1;
        const words = (title ?? '').replace(/…/g, '').trim();
        if (!source.includes(words)) missing.push(`${file}: ${title}`);
      }
    }
    expect(titles).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });

  it('has a row for every rule id it cites in the code', () => {
    const rows = new Set([...DOC.matchAll(/^\| (R-[A-Z]+-\d+) \|/gm)].map((m) => m[1]));
    expect(rows.size).toBeGreaterThan(100);
    const code = ['lib', 'functions', 'infra', 'events'].flatMap((dir) => citedIds(`${ROOT}${dir}`));
    expect([...new Set(code)].filter((id) => !rows.has(id))).toEqual([]);
  });
});

/** Every R-…-n id cited in the .ts files under `dir`. */
function citedIds(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter(
      (entry) =>
        entry.isFile() && entry.name.endsWith('.ts') && !join(entry.parentPath, entry.name).includes('node_modules'),
    )
    .flatMap((entry) =>
      [...readFileSync(join(entry.parentPath, entry.name), 'utf8').matchAll(/\bR-[A-Z]+-\d+\b/g)].map((m) => m[0]),
    );
}
