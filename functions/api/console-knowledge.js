// @ts-check
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The review console's knowledge, summary and search panels: a change to an item shown in one reloads all three.
// One part of the console script (console-shared.js says how the parts are joined).

import { api, clip, el, input, num, section, setStatus, state, str, turns, when } from './console-shared.js';
import { itemActions } from './console-item-actions.js';

export function loadKnowledge() {
  return section('knowledge', '/memory/tiers/long_term?kind=knowledge&limit=500', (d) => {
    const items = d.items || [];
    if (!items.length) return 'no promoted knowledge yet';
    return el(
      'div',
      {},
      items.map((/** @type {any} */ it) =>
        el('div', { class: 'item knowledge-item', 'data-path': str(it.path) }, [
          el('div', { class: 'title', text: str(it.title) }),
          el('div', { class: 'path', text: str(it.path) }),
          el('div', { class: 'text', text: clip(it.text, 300), title: str(it.text) }),
          el('div', { class: 'meta', text: `confidence ${num(it.confidence, 2)} · turns ${turns(it.sourceTurns)}` }),
          itemActions(str(it.id), str(it.text), afterChange),
        ]),
      ),
    );
  });
}

// Req R-SUM-10's summary quality metrics, above the summaries they are about.
/** @param {any} q */
function qualityLine(q) {
  if (!q) return null;
  const topics = (q.topics || []).map((/** @type {any} */ t) => `${str(t.topic)} (${num(t.summaries)})`).join(', ');
  return el('div', { class: 'meta quality', 'data-resurrections-of-deleted': str(q.resurrectionsOfDeleted) }, [
    `${num(q.summaries)} summaries · ${num(q.deleted)} deleted (${(100 * q.deletionRate).toFixed(0)}%) · resurrected ${num(q.resurrections)}× over ${num(q.resurrected)} (${(100 * q.resurrectionRate).toFixed(0)}%) · back after deletion ${num(q.resurrectionsOfDeleted)}${topics ? ` · topics: ${topics}` : ''}`,
  ]);
}

export function loadSummaries() {
  const both = async () => {
    const got = await Promise.all([api('GET', '/summaries'), api('GET', '/summaries/quality')]);
    return { summaries: got[0].summaries, quality: got[1].quality };
  };
  return section('summaries', both, (d) => {
    // Seed 003: each summary is a turn pair in the conversation, after the last turn it covers.
    const summaries = (d.summaries || [])
      .slice()
      .sort((/** @type {any} */ a, /** @type {any} */ b) => (a.afterTurn || 0) - (b.afterTurn || 0));
    if (!summaries.length) return 'no context summaries';
    return el(
      'div',
      {},
      [qualityLine(d.quality)].concat(
        summaries.map((/** @type {any} */ s) => {
          const del = /** @type {HTMLButtonElement} */ (
            el('button', { class: 'delete', type: 'button', text: 'Delete' })
          );
          del.addEventListener('click', async () => {
            del.disabled = true;
            try {
              await api('DELETE', `/summaries/${encodeURIComponent(str(s.id))}`);
              setStatus(`deleted summary ${str(s.id)}`, 'ok');
            } catch (e) {
              setStatus(`delete failed: ${/** @type {Error} */ (e).message}`, 'error');
            }
            await loadSummaries();
          });
          return el('div', { class: 'item summary-item', 'data-id': str(s.id) }, [
            el('div', { class: 'meta' }, [
              `after turn ${num(s.afterTurn)} · `,
              when(s.createdAt),
              el('span', { class: 'badge', text: str(s.kind) }),
              ` turns ${turns(s.sourceTurns)}`,
              s.deleted ? el('span', { class: 'badge', text: 'deleted' }) : null,
              s.edits?.length ? el('span', { class: 'badge', text: 'edited' }) : null,
            ]),
            el('div', { class: 'text summary-system' }, [
              el('span', { class: 'badge', text: 'system · summary' }),
              ` ${str(s.prompt)}`,
            ]),
            el('div', { class: 'text summary-assistant' }, [
              el('span', { class: 'badge', text: 'assistant · summary' }),
              ` ${str(s.text)}`,
            ]),
            el('div', { class: 'actions' }, [del]),
          ]);
        }),
      ),
    );
  });
}

// Why a search result ranked: each ranking that placed it and where, what it matched, its trust and recency.
/** @param {any} x */
function why(x) {
  if (!x) return '–';
  const places = (x.rankings || []).map((/** @type {any} */ r) => {
    const terms = Array.isArray(r.terms) && r.terms.length ? ` [${r.terms.join(' ')}]` : '';
    const members = Array.isArray(r.members) && r.members.length ? ` covering ${r.members.length}` : '';
    const answers = r.answers ? ` answers ${str(r.answers)}` : '';
    return `${str(r.ranking)} #${num(r.rank)}${terms}${members}${answers}`;
  });
  return `${places.join(' · ') || 'no ranking'} · trust ${num(x.quality, 2)} · recency ${num(x.recency, 2)}`;
}

function afterChange() {
  runSearch();
  loadKnowledge();
  loadSummaries();
}

let searches = 0;
export function runSearch() {
  const q = input('q').value.trim();
  if (!q || !state.user) return Promise.resolve();
  const mine = ++searches;
  return section(
    'search',
    () => api('POST', '/memory/search', { query: q, limit: 10, explain: true }),
    (d) => {
      const results = d.results || [];
      if (!results.length) return 'nothing found';
      return el(
        'div',
        {},
        results.map((/** @type {any} */ r) =>
          el('div', { class: 'item search-item', 'data-id': str(r.id) }, [
            el('div', { class: 'title' }, [
              str(r.title || r.id),
              el('span', { class: 'badge', text: str(r.kind) }),
              el('span', { class: 'badge', text: `score ${num(r.score, 3)}` }),
            ]),
            el('div', { class: 'path', text: str(r.id) }),
            el('div', { class: 'text', text: clip(r.text, 300), title: str(r.text) }),
            el('div', { class: 'meta', text: `source turns ${turns(r.sourceTurns)}` }),
            el('div', { class: 'meta why', text: `why: ${why(r.explain)}` }),
            itemActions(str(r.id), str(r.text), afterChange),
          ]),
        ),
      );
    },
    () => mine === searches,
  );
}
