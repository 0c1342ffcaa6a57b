// @ts-check
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The review console's script, in parts: functions/api/console.ts joins them in the order of its
// CONSOLE_SCRIPTS into one inline module of console.html (one scope, strict mode), dropping the
// parts' imports of each other and their `export`s. This part: the page's elements, the text
// helpers, the API call and a section's load. Type-checked by `npm run typecheck` (tsconfig.json
// allowJs, each part's @ts-check); what the API answers is untyped JSON (`any`).

/** An element of the page by id; every id the script names is in console.html. */
export const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** A form control of the page by id (console.html: inputs, and the forget-run button, disabled as one). */
export const input = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ ($(id));
export const state = { user: '', token: '' };

/**
 * el('div', {class: 'x', title: 't'}, [children or strings]): strings become text nodes.
 * @param {string} tag
 * @param {Record<string, string> | null} [attrs]
 * @param {Array<Node | string | null | undefined>} [children]
 * @returns {HTMLElement}
 */
export function el(tag, attrs, children) {
  const e = document.createElement(tag);
  Object.entries(attrs || {}).forEach(([k, v]) => {
    if (k === 'text') e.textContent = v;
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v);
  });
  (children || []).forEach((c) => {
    if (c !== null && c !== undefined) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  });
  return e;
}
/** @param {unknown} v */
export function str(v) {
  return v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}
/** @param {unknown} v @param {number} [digits] */
export function num(v, digits) {
  return typeof v === 'number' && Number.isFinite(v) ? (digits === undefined ? String(v) : v.toFixed(digits)) : '–';
}
/** @param {unknown} v */
export function pct(v) {
  return typeof v === 'number' && Number.isFinite(v) ? `${(v * 100).toFixed(1)}%` : '–';
}
/** @param {unknown} v */
export function count(v) {
  return Array.isArray(v) ? v.length : num(v);
}
/** @param {unknown} v */
export function turns(v) {
  return Array.isArray(v) && v.length ? v.join(', ') : '–';
}
/** @param {unknown} v */
export function when(v) {
  return v ? str(v).replace('T', ' ').slice(0, 19) : '–';
}
/** @param {unknown} text @param {number} n */
export function clip(text, n) {
  const t = str(text);
  return t.length > n ? `${t.slice(0, n).trimEnd()}…` : t;
}

/** @param {string} text @param {string} [kind] */
export function setStatus(text, kind) {
  const s = $('status');
  s.textContent = text;
  s.className = kind || '';
}

/**
 * One call of the memory API for the user; its JSON answer (untyped), or an Error naming the API's message and fields.
 * @param {string} method @param {string} path @param {unknown} [body]
 * @returns {Promise<any>}
 */
export async function api(method, path, body) {
  /** @type {{ method: string, headers: Record<string, string>, body?: string }} */
  const init = { method: method, headers: { Authorization: `Bearer ${state.token}` } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(`/v1/users/${encodeURIComponent(state.user)}${path}`, init);
  let data = null;
  try {
    data = await res.json();
  } catch (_e) {
    data = null;
  }
  if (!res.ok) {
    const err = data?.error;
    let msg = err?.message || `HTTP ${res.status}`;
    if (err && Array.isArray(err.fields) && err.fields.length && msg.indexOf('invalid request') !== 0) {
      msg += ` (${err.fields.map((/** @type {any} */ f) => `${str(f.path)}: ${str(f.message)}`).join('; ')})`;
    }
    throw new Error(msg);
  }
  return data || {};
}

// Loads one section: render(data) returns a node, or a string to show as the empty message.
// `current` (optional) says whether this load is still the section's latest: an older answer
// that arrives after a newer one is dropped, not rendered over it.
/**
 * @param {string} id
 * @param {string | (() => Promise<any>)} path
 * @param {(data: any) => Node | string} render
 * @param {() => boolean} [current]
 */
export async function section(id, path, render, current = () => true) {
  const sec = $(id),
    msg = /** @type {HTMLElement} */ (sec.querySelector('.msg')),
    body = /** @type {HTMLElement} */ (sec.querySelector('.body'));
  msg.hidden = false;
  msg.className = 'msg';
  msg.textContent = 'loading…';
  try {
    const data = typeof path === 'function' ? await path() : await api('GET', path);
    if (!current()) return;
    const out = render(data);
    body.replaceChildren();
    if (typeof out === 'string') {
      msg.textContent = out;
    } else {
      msg.hidden = true;
      msg.textContent = '';
      body.appendChild(out);
    }
  } catch (e) {
    if (!current()) return;
    body.replaceChildren();
    msg.className = 'msg error';
    msg.textContent = `error: ${/** @type {Error} */ (e).message}`;
  }
}

/** @param {string[]} headers @param {unknown[][]} rows */
export function table(headers, rows) {
  return el('table', {}, [
    el('thead', {}, [
      el(
        'tr',
        {},
        headers.map((h) => el('th', { text: h })),
      ),
    ]),
    el(
      'tbody',
      {},
      rows.map((r) =>
        el(
          'tr',
          {},
          r.map((c) => (typeof c === 'object' && c !== null ? /** @type {Node} */ (c) : el('td', { text: str(c) }))),
        ),
      ),
    ),
  ]);
}
