// @ts-check
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The review console's run panels: the batch log, the self-assessment and its chart, the run log.
// One part of the console script (console-shared.js says how the parts are joined).

import { count, el, num, pct, section, str, table, turns, when } from './console-shared.js';

// Seed 004 P3-M2: the model's assessment after the batch (confidence, caution, the user's sentiment).
/** @param {any} a */
export function assessment(a) {
  if (!a || typeof a !== 'object') return '–';
  const mood = Number(a.sentiment);
  return `confidence ${Number(a.confidence).toFixed(2)} · caution ${Number(a.caution).toFixed(2)} · sentiment ${mood > 0 ? '+' : ''}${mood.toFixed(2)}`;
}

export function loadBatches() {
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

export function loadAssessment() {
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

export function loadLog() {
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
