// @ts-check
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The review console's script: functions/api/console.ts inlines it into console.html as a
// module (its own scope, strict mode). Type-checked by `npm run typecheck` (tsconfig.json
// allowJs, this file's @ts-check); what the API answers is untyped JSON (`any`).

/** An element of the page by id; every id the script names is in console.html. */
const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** A form control of the page by id (console.html: inputs, and the forget-run button, disabled as one). */
const input = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ ($(id));
const state = { user: '', token: '' };

/**
 * el('div', {class: 'x', title: 't'}, [children or strings]): strings become text nodes.
 * @param {string} tag
 * @param {Record<string, string> | null} [attrs]
 * @param {Array<Node | string | null | undefined>} [children]
 * @returns {HTMLElement}
 */
function el(tag, attrs, children) {
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
function str(v) {
  return v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}
/** @param {unknown} v @param {number} [digits] */
function num(v, digits) {
  return typeof v === 'number' && Number.isFinite(v) ? (digits === undefined ? String(v) : v.toFixed(digits)) : '–';
}
/** @param {unknown} v */
function pct(v) {
  return typeof v === 'number' && Number.isFinite(v) ? `${(v * 100).toFixed(1)}%` : '–';
}
/** @param {unknown} v */
function count(v) {
  return Array.isArray(v) ? v.length : num(v);
}
/** @param {unknown} v */
function turns(v) {
  return Array.isArray(v) && v.length ? v.join(', ') : '–';
}
/** @param {unknown} v */
function when(v) {
  return v ? str(v).replace('T', ' ').slice(0, 19) : '–';
}
/** @param {unknown} text @param {number} n */
function clip(text, n) {
  const t = str(text);
  return t.length > n ? `${t.slice(0, n).trimEnd()}…` : t;
}

/** @param {string} text @param {string} [kind] */
function setStatus(text, kind) {
  const s = $('status');
  s.textContent = text;
  s.className = kind || '';
}

/**
 * One call of the memory API for the user; its JSON answer (untyped), or an Error naming the API's message and fields.
 * @param {string} method @param {string} path @param {unknown} [body]
 * @returns {Promise<any>}
 */
async function api(method, path, body) {
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
async function section(id, path, render, current = () => true) {
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
function table(headers, rows) {
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

function loadKnowledge() {
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

function loadStaged() {
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

// Req R-SUM-10's summary quality metrics, above the summaries they are about.
/** @param {any} q */
function qualityLine(q) {
  if (!q) return null;
  const topics = (q.topics || []).map((/** @type {any} */ t) => `${str(t.topic)} (${num(t.summaries)})`).join(', ');
  return el('div', { class: 'meta quality', 'data-resurrections-of-deleted': str(q.resurrectionsOfDeleted) }, [
    `${num(q.summaries)} summaries · ${num(q.deleted)} deleted (${(100 * q.deletionRate).toFixed(0)}%) · resurrected ${num(q.resurrections)}× over ${num(q.resurrected)} (${(100 * q.resurrectionRate).toFixed(0)}%) · back after deletion ${num(q.resurrectionsOfDeleted)}${topics ? ` · topics: ${topics}` : ''}`,
  ]);
}

function loadSummaries() {
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

// Seed 004 P3-M2/M3: the diary, every batch's attempt; a person keeps a rejected one or drops a written one.
function loadDiary() {
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

// Seed 004 P3-M2: the model's assessment after the batch (confidence, caution, the user's sentiment).
/** @param {any} a */
function assessment(a) {
  if (!a || typeof a !== 'object') return '–';
  const mood = Number(a.sentiment);
  return `confidence ${Number(a.confidence).toFixed(2)} · caution ${Number(a.caution).toFixed(2)} · sentiment ${mood > 0 ? '+' : ''}${mood.toFixed(2)}`;
}

function loadBatches() {
  return section('batches', '/batches?limit=50', (d) => {
    const batches = d.batches || [];
    if (!batches.length) return 'no batches yet';
    return table(
      [
        'time',
        'batch',
        'trigger',
        'status',
        'turns',
        'proposed',
        'passed',
        'rejected',
        'staged',
        'promoted',
        'assessment',
      ],
      batches.map((/** @type {any} */ b) => [
        when(b.timestamp),
        b.batchId,
        b.trigger,
        b.status,
        el('td', { class: 'wrap', text: turns(b.turns) }),
        num(b.itemsProposed),
        num(b.itemsPassed),
        count(b.rejections),
        count(b.staged),
        count(b.promoted),
        assessment(b.assessment),
      ]),
    );
  });
}

const SVG = 'http://www.w3.org/2000/svg';
/** @param {string} tag @param {Record<string, string | number>} attrs @param {string} [text] */
function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  Object.entries(attrs).forEach(([k, v]) => {
    e.setAttribute(k, String(v));
  });
  if (text !== undefined) e.textContent = text;
  return e;
}

/**
 * The trend chart's frame: its size and margins, the points' coordinates and the scales.
 * @param {any[]} points
 */
function chartFrame(points) {
  const W = 600,
    H = 200,
    L = 44,
    R = 16,
    T = 24,
    B = 30;
  const xs = points.map((p) => Date.parse(p.startedAt));
  const ys = points.map((p) => (typeof p.issuesPerSession === 'number' ? p.issuesPerSession : 0));
  const x0 = Math.min.apply(null, xs),
    x1 = Math.max.apply(null, xs);
  const yMax = Math.max.apply(null, ys.concat([0])) * 1.1 || 1;
  // Number(): an index past the end reads undefined, which the arithmetic turns into NaN either way.
  const px = (/** @type {number | undefined} */ x) =>
    x1 === x0 ? L + (W - L - R) / 2 : L + ((Number(x) - x0) / (x1 - x0)) * (W - L - R);
  const py = (/** @type {number | undefined} */ y) => T + (1 - Number(y) / yMax) * (H - T - B);
  return { W, H, L, R, T, B, xs, ys, yMax, px, py };
}

/**
 * The chart's axes, grid lines and labels: three on the y axis, up to three dates on the x axis.
 * @param {SVGElement} s @param {ReturnType<typeof chartFrame>} frame @param {any[]} points
 */
function chartAxes(s, frame, points) {
  const { W, H, L, R, T, B, xs, yMax, px, py } = frame;
  s.appendChild(svg('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#9aa5b1' }));
  s.appendChild(svg('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#9aa5b1' }));
  [0, 0.5, 1].forEach((f) => {
    const y = py(yMax * f);
    if (f > 0) s.appendChild(svg('line', { x1: L, y1: y, x2: W - R, y2: y, stroke: '#eef1f5' }));
    s.appendChild(
      svg(
        'text',
        { x: L - 6, y: y + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#66727f' },
        (yMax * f).toFixed(2),
      ),
    );
  });
  const ticks =
    points.length > 2 ? [0, Math.floor((points.length - 1) / 2), points.length - 1] : points.map((_p, i) => i);
  ticks.forEach((i, n) => {
    const anchor = ticks.length === 1 ? 'middle' : n === 0 ? 'start' : n === ticks.length - 1 ? 'end' : 'middle';
    s.appendChild(
      svg(
        'text',
        { x: px(xs[i]), y: H - 10, 'text-anchor': anchor, 'font-size': 11, fill: '#66727f' },
        str(points[i].startedAt).slice(0, 10),
      ),
    );
  });
  s.appendChild(svg('text', { x: 4, y: 12, 'font-size': 11, fill: '#66727f' }, 'issues per session'));
}

/**
 * The chart's line through the points in time order, and a dot per point with its title.
 * @param {SVGElement} s @param {ReturnType<typeof chartFrame>} frame @param {any[]} points
 */
function chartLine(s, frame, points) {
  const { xs, ys, px, py } = frame;
  const order = xs.map((_x, i) => i).sort((a, b) => Number(xs[a]) - Number(xs[b]));
  s.appendChild(
    svg('polyline', {
      points: order.map((i) => `${px(xs[i])},${py(ys[i])}`).join(' '),
      fill: 'none',
      stroke: '#2f6fde',
      'stroke-width': 2,
    }),
  );
  order.forEach((i) => {
    const c = svg('circle', { cx: px(xs[i]), cy: py(ys[i]), r: 4, fill: '#fff', stroke: '#2f6fde', 'stroke-width': 2 });
    c.appendChild(
      svg(
        'title',
        {},
        `${when(points[i].startedAt)}: ${ys[i]} issues/session over ${num(points[i].sessionsReviewed)} sessions`,
      ),
    );
    s.appendChild(c);
  });
}

/** The issues-per-session trend over the nightly runs, as an SVG chart. @param {any[]} points */
function chart(points) {
  const f = chartFrame(points);
  const s = svg('svg', {
    id: 'trend-chart',
    width: f.W,
    height: f.H,
    viewBox: `0 0 ${f.W} ${f.H}`,
    role: 'img',
    'aria-label': 'issues per session over time',
  });
  chartAxes(s, f, points);
  chartLine(s, f, points);
  return s;
}

function loadAssessment() {
  return section('assessment', '/sleep-time/assessment?days=365', (d) => {
    const a = d.assessment || {};
    const points = (d.points || []).filter((/** @type {any} */ p) => !Number.isNaN(Date.parse(p.startedAt)));
    const stat = (/** @type {string} */ v, /** @type {string} */ label) =>
      el('div', { class: 'stat' }, [el('b', { text: v }), el('span', { text: label })]);
    return el('div', {}, [
      el('div', { class: 'stats' }, [
        stat(num(a.runs), 'runs'),
        stat(num(a.sessionsReviewed), 'sessions reviewed'),
        stat(str(a.trend || '–').replace(/_/g, ' '), 'trend'),
        stat(pct(a.correctionRate), 'correction rate'),
        stat(pct(a.unresolvedRate), 'unresolved rate'),
        stat(num(a.contradictionCount), 'contradictions'),
      ]),
      points.length < 1 ? el('p', { class: 'msg', text: 'no nightly runs yet' }) : chart(points),
    ]);
  });
}

function loadLog() {
  return section('log', '/sleep-time/runs?limit=20', (d) => {
    const runs = d.runs || [];
    if (!runs.length) return 'no sleep-time runs yet';
    return table(
      ['started', 'kind', 'status', 'sessions', 'memories stored', 'findings'],
      runs.map((/** @type {any} */ r) => {
        const f = r.findingsByCategory || {};
        const findings =
          Object.keys(f)
            .map((k) => `${k} ${str(f[k])}`)
            .join(', ') || '–';
        return [
          when(r.startedAt),
          r.kind,
          r.status,
          num(r.sessionsReviewed),
          num(r.memoriesStored),
          el('td', { class: 'wrap', text: findings }),
        ];
      }),
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

// A person's delete (any kind) and edit (Knowledge facts, findings, summaries): a reason asked, the outcome in the status.
/** @param {string} id @param {() => void} then */
async function deleteItem(id, then) {
  const reason = prompt(`Delete ${id}? Why (kept in the audit trail, optional):`, '');
  if (reason === null) return;
  try {
    await api(
      'DELETE',
      `/memory/items/${encodeURIComponent(id)}${reason ? `?reason=${encodeURIComponent(reason)}` : ''}`,
    );
    setStatus(`deleted ${id}`, 'ok');
    then();
  } catch (e) {
    setStatus(`delete failed: ${/** @type {Error} */ (e).message}`, 'error');
  }
}
/** @param {string} id @param {string} current @param {() => void} then */
async function editItem(id, current, then) {
  const text = prompt(`New text of ${id}:`, current);
  if (text === null || text.trim() === '' || text === current) return;
  const reason = prompt('Why (kept in the audit trail with the old text):', '');
  if (!reason) return;
  try {
    await api('POST', `/memory/items/${encodeURIComponent(id)}`, { text: text, reason: reason });
    setStatus(`edited ${id}`, 'ok');
    then();
  } catch (e) {
    setStatus(`edit failed: ${/** @type {Error} */ (e).message}`, 'error');
  }
}
// Req R-TIER-8: a reviewer undoes an entry's last contradiction (its tier and confidence as before it).
/** @param {string} id @param {() => void} then */
async function undoContradiction(id, then) {
  try {
    const d = await api('POST', `/memory/items/${encodeURIComponent(id)}/contradict/undo`);
    setStatus(`undid the last contradiction of ${id}: ${str(d.item?.tier)} at ${num(d.item?.confidence, 2)}`, 'ok');
    then();
  } catch (e) {
    setStatus(`undo failed: ${/** @type {Error} */ (e).message}`, 'error');
  }
}
/** @param {string} id @param {string} text @param {() => void} then */
function itemActions(id, text, then) {
  const del = el('button', { type: 'button', class: 'delete', text: 'Delete' });
  del.addEventListener('click', () => deleteItem(id, then));
  const buttons = [del];
  if (/^(knowledge|summary):/.test(id)) {
    const edit = el('button', { type: 'button', class: 'edit', text: 'Edit' });
    edit.addEventListener('click', () => editItem(id, text, then));
    buttons.push(edit);
  }
  if (id.startsWith('mem:')) {
    const undo = el('button', { type: 'button', class: 'undo', text: 'Undo contradiction' });
    undo.addEventListener('click', () => undoContradiction(id, then));
    buttons.push(undo);
  }
  return el('div', { class: 'actions' }, buttons);
}
function afterChange() {
  runSearch();
  loadKnowledge();
  loadSummaries();
}

let searches = 0;
function runSearch() {
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

// Forget by provenance: the dry run's receipt is shown, and only then can the real run be asked for.
/** @type {any} */
let pendingForget = null;
function forgetRequest() {
  const session = input('forget-session').value.trim();
  if (session) return { sessionId: session };
  return {
    turns: input('forget-turns')
      .value.split(/[\s,]+/)
      .filter(Boolean)
      .map(Number),
  };
}
/** @param {any} r */
function receiptNode(r) {
  const kinds = Object.keys(r.removed || {}).filter((k) => r.removed[k].length);
  return el('div', { class: 'receipt' }, [
    el('div', {
      class: 'meta',
      text: `${r.dryRun ? 'dry run: would remove' : 'removed'} ${num(r.total)} item(s); turns ${turns(r.turns)}`,
    }),
    table(
      ['kind', 'ids'],
      kinds.map((k) => [k, el('td', { class: 'wrap', text: r.removed[k].join(', ') })]),
    ),
  ]);
}
/** @param {boolean} dryRun */
function forget(dryRun) {
  const request = dryRun ? forgetRequest() : pendingForget;
  if (!request) return Promise.resolve();
  input('forget-run').disabled = true;
  return section(
    'forget',
    () => api('POST', '/memory/forget', Object.assign({}, request, { dryRun: dryRun })),
    (d) => {
      pendingForget = dryRun && d.receipt.total > 0 ? request : null;
      input('forget-run').disabled = !pendingForget;
      if (!dryRun) {
        loadAll();
        setStatus(`forgot ${d.receipt.total} item(s)`, 'ok');
      }
      return receiptNode(d.receipt);
    },
  );
}

function loadAll() {
  state.user = input('user').value.trim();
  state.token = input('token').value.trim();
  if (!state.user || !state.token) {
    setStatus('enter both a token and a user id', 'error');
    return;
  }
  try {
    sessionStorage.setItem('console.user', state.user);
    sessionStorage.setItem('console.token', state.token);
  } catch (_e) {
    /* storage unavailable */
  }
  setStatus(`loading ${state.user}…`);
  Promise.all([
    loadKnowledge(),
    loadStaged(),
    loadSummaries(),
    loadDiary(),
    loadBatches(),
    loadAssessment(),
    loadLog(),
  ]).then(() => {
    if (!$('status').className) setStatus(`loaded ${state.user}`);
  });
}

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
