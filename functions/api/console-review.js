// @ts-check
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The review console's staged and diary panels: what a person keeps or drops.
// One part of the console script (console-shared.js says how the parts are joined).

import { api, clip, el, num, section, setStatus, str, turns, when } from './console-shared.js';
import { loadKnowledge } from './console-knowledge.js';
import { assessment } from './console-runs.js';

/** @param {'promote' | 'discard'} action @param {any} item @param {HTMLButtonElement[]} buttons */
async function review(action, item, buttons) {
  buttons.forEach((b) => {
    b.disabled = true;
  });
  try {
    const body =
      action === 'promote' ? { path: item.path } : { path: item.path, reason: 'discarded in the review console' };
    const res = await api('POST', `/review/${action}`, body);
    setStatus(
      action === 'promote' ? `promoted to ${str(res.knowledgePath)}` : `discarded ${str(res.path || item.path)}`,
      'ok',
    );
  } catch (e) {
    setStatus(`${action} failed: ${/** @type {Error} */ (e).message}`, 'error');
    buttons.forEach((b) => {
      b.disabled = false;
    });
  }
  await Promise.all([loadKnowledge(), loadStaged()]);
}

// The review list comes a page at a time (each page reads at most 200 records): follow the pages.
async function stagedPages() {
  /** @type {any[]} */
  let staged = [],
    token = null;
  for (let i = 0; i < 25; i++) {
    const d = await api('GET', `/review/staged?limit=200${token ? `&nextToken=${encodeURIComponent(token)}` : ''}`);
    staged = staged.concat(d.staged || []);
    token = d.nextToken;
    if (!token) break;
  }
  return { staged: staged };
}

export function loadStaged() {
  return section('staged', stagedPages, (d) => {
    const staged = d.staged || [];
    if (!staged.length) return 'nothing staged';
    return el(
      'div',
      {},
      staged.map((/** @type {any} */ it) => {
        const history = Array.isArray(it.history) ? it.history : [];
        const promote = /** @type {HTMLButtonElement} */ (
          el('button', { class: 'promote', type: 'button', text: 'Promote' })
        );
        const discard = /** @type {HTMLButtonElement} */ (
          el('button', { class: 'discard', type: 'button', text: 'Discard' })
        );
        promote.addEventListener('click', () => {
          review('promote', it, [promote, discard]);
        });
        discard.addEventListener('click', () => {
          review('discard', it, [promote, discard]);
        });
        return el('div', { class: 'item staged-item', 'data-path': str(it.path) }, [
          el('div', { class: 'title' }, [
            str(it.title),
            el('span', { class: 'badge', text: str(it.kind) }),
            it.status && it.status !== it.kind ? el('span', { class: 'badge', text: str(it.status) }) : null,
          ]),
          el('div', { class: 'path', text: str(it.path) }),
          el('div', { class: 'text', text: clip(it.text, 300), title: str(it.text) }),
          el('div', {
            class: 'meta',
            text: `promotion count ${num(it.promotionCount)} / ${num(it.promotionsNeeded)} · confidence ${num(it.confidence, 2)} · turns ${turns(it.sourceTurns)}`,
          }),
          el('details', { class: 'history' }, [
            el('summary', { text: `gate history (${history.length})` }),
            el(
              'ol',
              {},
              history.map((/** @type {any} */ h) =>
                el('li', {}, [
                  el('b', { text: str(h.event) }),
                  ` ${when(h.at)}${h.batchId ? ` · ${str(h.batchId)}` : ''} — ${str(h.detail)}`,
                ]),
              ),
            ),
          ]),
          it.markdown
            ? el('details', { class: 'markdown' }, [
                el('summary', { text: 'document' }),
                el('pre', { text: str(it.markdown) }),
              ])
            : null,
          el('div', { class: 'actions' }, [promote, discard]),
        ]);
      }),
    );
  });
}

// Seed 004 P3-M2/M3: the diary, every batch's attempt; a person keeps a rejected one or drops a written one.
export function loadDiary() {
  return section('diary', '/diary?include=all&limit=50', (d) => {
    const entries = d.entries || [];
    if (!entries.length) return 'no diary entries yet';
    return el(
      'div',
      {},
      entries.map((/** @type {any} */ e) => {
        const decision = e.visible ? 'drop' : 'keep';
        const act = /** @type {HTMLButtonElement} */ (
          el('button', { class: decision, type: 'button', text: e.visible ? 'Drop' : 'Keep' })
        );
        act.addEventListener('click', async () => {
          act.disabled = true;
          try {
            await api('POST', `/diary/${encodeURIComponent(str(e.id))}`, { decision: decision });
            setStatus(`${decision === 'keep' ? 'kept' : 'dropped'} diary entry ${str(e.id)}`, 'ok');
          } catch (err) {
            setStatus(`diary ${decision} failed: ${/** @type {Error} */ (err).message}`, 'error');
          }
          await loadDiary();
        });
        const state = e.override
          ? e.override.decision === 'keep'
            ? 'kept'
            : 'dropped'
          : e.written
            ? 'written'
            : 'rejected';
        const r = e.reflection;
        const criteria = Object.keys(e.criteria || {}).filter((k) => (e.criteria[k] || []).length);
        return el('div', { class: 'item diary-item', 'data-id': str(e.id), 'data-visible': String(!!e.visible) }, [
          el('div', { class: 'meta' }, [
            when(e.at),
            el('span', { class: 'badge', text: str(e.type) }),
            el('span', { class: 'badge', text: state }),
            ` ${str(e.trigger)} · turns ${turns(e.turns)}`,
          ]),
          r
            ? el('div', { class: 'text' }, [
                `insight: ${str(r.insight)} · recommendation: ${str(r.recommendation)} · confidence ${Number(r.confidence).toFixed(2)}`,
              ])
            : null,
          el('div', { class: 'meta' }, [
            criteria.length ? `criteria: ${criteria.join(', ')}` : str(e.reason),
            e.emotion ? ` · ${assessment(e.emotion)}` : '',
          ]),
          el('div', { class: 'actions' }, [act]),
        ]);
      }),
    );
  });
}
