/** Markdown documents with YAML front matter: the on-disk form of turns and knowledge. */
import { parse, stringify } from 'yaml';

export function renderFrontMatter(meta: Record<string, unknown>, body: string): string {
  return `---\n${stringify(meta, { lineWidth: 0 })}---\n\n${body.endsWith('\n') ? body : `${body}\n`}`;
}

export function parseFrontMatter(text: string): { meta: Record<string, unknown>; body: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!match) return { meta: {}, body: text };
  const meta = parse(match[1] ?? '') as unknown;
  return {
    meta: meta !== null && typeof meta === 'object' ? (meta as Record<string, unknown>) : {},
    body: text.slice(match[0].length).replace(/^\r?\n/, ''),
  };
}
