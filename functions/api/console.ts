/**
 * The review console: one self-contained HTML page (inline CSS and vanilla JS, nothing
 * external), served at GET /console. It calls the /v1 routes of contract.ts from the browser
 * with the token the reviewer types in. Everything the server returns is untrusted: the script
 * only ever inserts it with textContent / setAttribute, never as markup.
 *
 * The page is two static files beside this module: console.html, whose
 * `<script type="module" src="console-script.js">` is replaced by console-script.js's text when served (so
 * Biome lints the script like the rest of the code, and the page stays one request), and the
 * script's SHA-256 goes into the page's Content-Security-Policy as its only allowed script
 * (`script-src 'sha256-…'`, CSP Level 2 hash sources: https://www.w3.org/TR/CSP2/#script-src-hash-usage).
 * Read once per container. Under tsx and vitest the files sit beside this source file; in the
 * Lambda bundle (CommonJS, one index.js) the stack copies them beside the bundle
 * (CONSOLE_FILES, the api function's `assets` in infra/constructs/function-specs.ts).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The page and its script, beside this module (source) or beside the bundle (Lambda). */
export const CONSOLE_FILES = ['console.html', 'console-script.js'] as const;

/** Where the page names its script; replaced by the script's text when served. */
const SCRIPT_TAG = '<script type="module" src="console-script.js"></script>';

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
  page ??= assemble(
    ...(CONSOLE_FILES.map((file) => readFileSync(join(moduleDir(), file), 'utf8')) as [string, string]),
  );
  return page;
}

function assemble(template: string, script: string): ConsolePage {
  if (!template.includes(SCRIPT_TAG)) throw new Error(`console.html lost its ${SCRIPT_TAG}`);
  const body = `\n${script}`;
  const hash = createHash('sha256').update(body, 'utf8').digest('base64');
  return {
    html: template.replace(SCRIPT_TAG, () => `<script type="module">${body}</script>`),
    contentSecurityPolicy: `default-src 'self'; script-src 'sha256-${hash}'; style-src 'unsafe-inline'; img-src 'self' data:`,
  };
}
