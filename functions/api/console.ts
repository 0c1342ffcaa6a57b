/**
 * The review console: one self-contained HTML page (inline CSS and vanilla JS, nothing
 * external), served at GET /console. It calls the /v1 routes of contract.ts from the browser
 * with the token the reviewer types in. Everything the server returns is untrusted: the script
 * only ever inserts it with textContent / setAttribute, never as markup.
 *
 * The page is static files beside this module: console.html, whose `<script type="module" src="…">`
 * tags, one per part of the script (CONSOLE_SCRIPTS, in that order), are replaced when served by
 * one inline module script: the parts joined in that order, without their imports of each other
 * and their `export`s, so that they share one scope (an inline module cannot import another by a
 * relative URL). So Biome lints and tsc checks each part like the rest of the code, and the page
 * stays one request; the script's SHA-256 goes into the page's Content-Security-Policy as its
 * only allowed script
 * (`script-src 'sha256-…'`, CSP Level 2 hash sources: https://www.w3.org/TR/CSP2/#script-src-hash-usage).
 * Read once per container. Under tsx and vitest the files sit beside this source file; in the
 * Lambda bundle (CommonJS, one index.js) the stack copies them beside the bundle
 * (CONSOLE_FILES, the api function's `assets` in infra/constructs/function-specs.ts).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The parts of the page's script, in the order they are joined: each part after the parts it
 * imports from, console-start.js (which runs the page) last.
 */
export const CONSOLE_SCRIPTS = [
  'console-shared.js',
  'console-item-actions.js',
  'console-knowledge.js',
  'console-runs.js',
  'console-review.js',
  'console-panels.js',
  'console-forget.js',
  'console-start.js',
] as const;

/** The page and its script's parts, beside this module (source) or beside the bundle (Lambda). */
export const CONSOLE_FILES = ['console.html', ...CONSOLE_SCRIPTS] as const;

/** Where the page names its script's parts, one tag a line; replaced by the joined script when served. */
const SCRIPT_TAGS = CONSOLE_SCRIPTS.map((file) => `<script type="module" src="${file}"></script>`).join('\n');

export interface ConsolePage {
  html: string;
  /** The page's Content-Security-Policy: its inline script by hash, inline styles, nothing external. */
  contentSecurityPolicy: string;
}

let page: ConsolePage | undefined;

/** The directory of this module: __dirname in the CommonJS bundle, import.meta.url under ES modules. */
function moduleDir(): string {
  return typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
}

export function consolePage(): ConsolePage {
  page ??= assemble(...readFiles());
  return page;
}

/** The page's template, and its script's parts joined in order (a newline between two parts). */
function readFiles(): [string, string] {
  const [template, ...scripts] = CONSOLE_FILES.map((file) => readFileSync(join(moduleDir(), file), 'utf8'));
  return [template as string, scripts.map(inScope).join('\n')];
}

/** A part's imports of the other parts: dropped, the joined parts are one scope. */
const PART_IMPORT = /^import \{[^}]*\} from '\.\/console-[a-z-]+\.js';\n/gm;
/** A part's `export` before a declaration: dropped, nothing outside the page imports it. */
const PART_EXPORT = /^export (?=(?:async )?function |const |let )/gm;

/** One part of the script as it reads in the joined module: its declarations, none imported or exported. */
function inScope(part: string): string {
  const text = part.replace(PART_IMPORT, '').replace(PART_EXPORT, '');
  if (/^(?:import|export)\b/m.test(text)) throw new Error('a console script part imports or exports past its parts');
  return text;
}

function assemble(template: string, script: string): ConsolePage {
  if (!template.includes(SCRIPT_TAGS)) throw new Error(`console.html lost its ${SCRIPT_TAGS}`);
  const body = `\n${script}`;
  const hash = createHash('sha256').update(body, 'utf8').digest('base64');
  return {
    html: template.replace(SCRIPT_TAGS, () => `<script type="module">${body}</script>`),
    contentSecurityPolicy: `default-src 'self'; script-src 'sha256-${hash}'; style-src 'unsafe-inline'; img-src 'self' data:`,
  };
}
