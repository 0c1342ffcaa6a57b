// @ts-check
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The review console's start: the page's forms, and the user and token from the address or the session.
// One part of the console script (console-shared.js says how the parts are joined).

import { $, input } from './console-shared.js';
import { runSearch } from './console-knowledge.js';
import { loadAll } from './console-panels.js';
import { forget } from './console-forget.js';

// #user=<id>&token=<tok>; split by hand so a '+' in a token stays a '+'.
function fromHash() {
  /** @type {Record<string, string>} */
  const out = {};
  location.hash
    .replace(/^#/, '')
    .split('&')
    .forEach((part) => {
      const i = part.indexOf('=');
      if (i > 0) {
        try {
          out[decodeURIComponent(part.slice(0, i))] = decodeURIComponent(part.slice(i + 1));
        } catch (_e) {
          /* malformed */
        }
      }
    });
  return out;
}

$('login').addEventListener('submit', (ev) => {
  ev.preventDefault();
  loadAll();
});
$('search-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  runSearch();
});
$('forget-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  forget(true);
});
$('forget-run').addEventListener('click', () => forget(false));
/** @type {{ user?: string | null, token?: string | null }} */
let stored = {};
const h = fromHash();
try {
  stored = { user: sessionStorage.getItem('console.user'), token: sessionStorage.getItem('console.token') };
} catch (_e) {
  /* storage unavailable */
}
input('user').value = h.user || stored.user || '';
input('token').value = h.token || stored.token || '';
if (h.user && h.token) loadAll();
