/**
 * The review console: one self-contained HTML page (inline CSS and vanilla JS, nothing
 * external), console.html beside this module, served at GET /console. It calls the /v1 routes
 * of contract.ts from the browser with the token the reviewer types in. Everything the server
 * returns is untrusted: the script only ever inserts it with textContent / setAttribute, never
 * as markup.
 *
 * The page is a static file read once per container. Under tsx and vitest it sits beside this
 * source file; in the Lambda bundle (CommonJS, one index.js) the stack copies it beside the
 * bundle (CONSOLE_PAGE, the api function's `assets` in infra/stacks/stateless-stack.ts).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The page's file name, beside this module (source) or beside the bundle (Lambda). */
export const CONSOLE_PAGE = 'console.html';

let page: string | undefined;

/** The directory of this module: __dirname in the CommonJS bundle, import.meta.url under ES modules. */
function moduleDir(): string {
  return typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
}

export function consoleHtml(): string {
  page ??= readFileSync(join(moduleDir(), CONSOLE_PAGE), 'utf8');
  return page;
}
