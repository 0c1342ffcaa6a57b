/**
 * The review console: one self-contained HTML page (inline CSS and vanilla JS, nothing
 * external) served at GET /console. It calls the /v1 routes of contract.ts from the browser
 * with the token the reviewer types in. Everything the server returns is untrusted: the
 * script only ever inserts it with textContent / setAttribute, never as markup.
 *
 * The embedded script deliberately uses no template literals and no backslashes, so this
 * TypeScript template literal passes it through unchanged.
 */
export function consoleHtml(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Reflective memory · review console</title>
<style>
  :root { --bg: #f5f7fa; --card: #fff; --line: #e2e6ec; --ink: #1f2933; --muted: #66727f; --accent: #2f6fde; --ok: #1f8a4c; --bad: #c2412d; }
  * { box-sizing: border-box; }
  body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  header { background: var(--card); border-bottom: 1px solid var(--line); padding: 12px 24px; display: flex; flex-wrap: wrap; align-items: center; gap: 12px 24px; position: sticky; top: 0; z-index: 2; }
  header h1 { font-size: 17px; margin: 0; font-weight: 600; }
  form { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
  label { color: var(--muted); font-size: 13px; }
  input { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px; width: 190px; }
  button { font: inherit; padding: 5px 12px; border-radius: 6px; border: 1px solid var(--line); background: #fff; cursor: pointer; }
  button:hover { border-color: var(--accent); }
  button:disabled { opacity: .5; cursor: default; }
  #load, .promote { background: var(--accent); border-color: var(--accent); color: #fff; }
  .discard, .delete { color: var(--bad); }
  #status { margin-left: auto; font-size: 13px; color: var(--muted); padding: 4px 10px; border-radius: 6px; }
  #status.ok { background: #e6f4ec; color: var(--ok); }
  #status.error { background: #fbe9e6; color: var(--bad); }
  main { display: grid; grid-template-columns: repeat(auto-fit, minmax(540px, 1fr)); gap: 16px; padding: 16px 24px 32px; }
  section { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; min-width: 0; }
  section.wide { grid-column: 1 / -1; }
  section h2 { font-size: 15px; margin: 0 0 8px; display: flex; justify-content: space-between; align-items: baseline; }
  section h2 small { font-weight: normal; color: var(--muted); font-size: 12px; }
  .body { max-height: 460px; overflow: auto; }
  .msg { color: var(--muted); font-style: italic; margin: 4px 0; }
  .msg.error { color: var(--bad); font-style: normal; }
  .item { border-top: 1px solid var(--line); padding: 8px 0; }
  .item:first-child { border-top: 0; }
  .item .title { font-weight: 600; }
  .path { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; color: var(--muted); word-break: break-all; }
  .text { margin: 4px 0; white-space: pre-wrap; }
  .meta { font-size: 12px; color: var(--muted); }
  .badge { display: inline-block; font-size: 11px; padding: 1px 7px; border-radius: 10px; background: #eef2f8; color: #40566f; margin-left: 6px; font-weight: normal; }
  .actions { display: flex; gap: 6px; margin-top: 6px; }
  details { font-size: 12px; margin-top: 4px; }
  details ol { margin: 4px 0; padding-left: 20px; }
  table { border-collapse: collapse; width: 100%; font-size: 13px; }
  th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
  td.wrap { white-space: normal; }
  th { color: var(--muted); font-weight: 600; font-size: 12px; position: sticky; top: 0; background: var(--card); }
  .stats { display: grid; grid-template-columns: repeat(3, 1fr); gap: 8px; margin-bottom: 10px; }
  .stat { background: var(--bg); border-radius: 8px; padding: 6px 10px; }
  .stat b { display: block; font-size: 18px; }
  .stat span { font-size: 12px; color: var(--muted); }
  #trend-chart { max-width: 100%; height: auto; display: block; }
</style>
</head>
<body>
<header>
  <h1>Review console</h1>
  <form id="login">
    <label for="token">API token</label><input id="token" type="password" autocomplete="off">
    <label for="user">User id</label><input id="user" type="text" autocomplete="off">
    <button id="load" type="submit">Open</button>
  </form>
  <div id="status" role="status" aria-live="polite">Enter a token and a user id, then Open.</div>
</header>
<main>
  <section id="knowledge"><h2>Knowledge <small>promoted, long-term</small></h2><p class="msg">not loaded</p><div class="body"></div></section>
  <section id="staged"><h2>Staged <small>waiting for promotion, with gate history</small></h2><p class="msg">not loaded</p><div class="body"></div></section>
  <section id="reflections"><h2>Reflections <small>context summaries</small></h2><p class="msg">not loaded</p><div class="body"></div></section>
  <section id="diary" class="wide"><h2>Diary <small>reflections on events and selective observations, with rejected attempts; keep or drop</small></h2><p class="msg">not loaded</p><div class="body"></div></section>
  <section id="assessment"><h2>Self-assessment <small>nightly runs, last 365 days</small></h2><p class="msg">not loaded</p><div class="body"></div></section>
  <section id="batches" class="wide"><h2>Batches <small>reflector batch logs</small></h2><p class="msg">not loaded</p><div class="body"></div></section>
  <section id="log" class="wide"><h2>Reflection log <small>latest runs</small></h2><p class="msg">not loaded</p><div class="body"></div></section>
</main>
<script>
(function () {
  'use strict';
  var $ = function (id) { return document.getElementById(id); };
  var state = { user: '', token: '' };

  // el('div', {class: 'x', title: 't'}, [children or strings]): strings become text nodes.
  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') e.textContent = attrs[k]; else if (k === 'class') e.className = attrs[k]; else e.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c !== null && c !== undefined) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return e;
  }
  function str(v) { return v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v); }
  function num(v, digits) { return typeof v === 'number' && isFinite(v) ? (digits === undefined ? String(v) : v.toFixed(digits)) : '–'; }
  function pct(v) { return typeof v === 'number' && isFinite(v) ? (v * 100).toFixed(1) + '%' : '–'; }
  function count(v) { return Array.isArray(v) ? v.length : num(v); }
  function turns(v) { return Array.isArray(v) && v.length ? v.join(', ') : '–'; }
  function when(v) { return v ? str(v).replace('T', ' ').slice(0, 19) : '–'; }
  function clip(t, n) { t = str(t); return t.length > n ? t.slice(0, n).trimEnd() + '…' : t; }

  function setStatus(text, kind) { var s = $('status'); s.textContent = text; s.className = kind || ''; }

  async function api(method, path, body) {
    var init = { method: method, headers: { Authorization: 'Bearer ' + state.token } };
    if (body !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
    var res = await fetch('/v1/users/' + encodeURIComponent(state.user) + path, init);
    var data = null;
    try { data = await res.json(); } catch (e) { data = null; }
    if (!res.ok) {
      var err = data && data.error;
      var msg = (err && err.message) || ('HTTP ' + res.status);
      if (err && Array.isArray(err.fields) && err.fields.length && msg.indexOf('invalid request') !== 0) {
        msg += ' (' + err.fields.map(function (f) { return str(f.path) + ': ' + str(f.message); }).join('; ') + ')';
      }
      throw new Error(msg);
    }
    return data || {};
  }

  // Loads one section: render(data) returns a node, or a string to show as the empty message.
  async function section(id, path, render) {
    var sec = $(id), msg = sec.querySelector('.msg'), body = sec.querySelector('.body');
    msg.hidden = false; msg.className = 'msg'; msg.textContent = 'loading…';
    try {
      var out = render(typeof path === 'function' ? await path() : await api('GET', path));
      body.replaceChildren();
      if (typeof out === 'string') { msg.textContent = out; } else { msg.hidden = true; msg.textContent = ''; body.appendChild(out); }
    } catch (e) {
      body.replaceChildren();
      msg.className = 'msg error'; msg.textContent = 'error: ' + e.message;
    }
  }

  function table(headers, rows) {
    return el('table', {}, [
      el('thead', {}, [el('tr', {}, headers.map(function (h) { return el('th', { text: h }); }))]),
      el('tbody', {}, rows.map(function (r) { return el('tr', {}, r.map(function (c) { return typeof c === 'object' && c !== null ? c : el('td', { text: str(c) }); })); })),
    ]);
  }

  function loadKnowledge() {
    return section('knowledge', '/memory/tiers/long_term?kind=knowledge&limit=500', function (d) {
      var items = d.items || [];
      if (!items.length) return 'no promoted knowledge yet';
      return el('div', {}, items.map(function (it) {
        return el('div', { class: 'item knowledge-item', 'data-path': str(it.path) }, [
          el('div', { class: 'title', text: str(it.title) }),
          el('div', { class: 'path', text: str(it.path) }),
          el('div', { class: 'text', text: clip(it.text, 300), title: str(it.text) }),
          el('div', { class: 'meta', text: 'confidence ' + num(it.confidence, 2) + ' · turns ' + turns(it.sourceTurns) }),
        ]);
      }));
    });
  }

  async function review(action, item, buttons) {
    buttons.forEach(function (b) { b.disabled = true; });
    try {
      var body = action === 'promote' ? { path: item.path } : { path: item.path, reason: 'discarded in the review console' };
      var res = await api('POST', '/review/' + action, body);
      setStatus(action === 'promote' ? 'promoted to ' + str(res.knowledgePath) : 'discarded ' + str(res.path || item.path), 'ok');
    } catch (e) {
      setStatus(action + ' failed: ' + e.message, 'error');
      buttons.forEach(function (b) { b.disabled = false; });
    }
    await Promise.all([loadKnowledge(), loadStaged()]);
  }

  // The review list comes a page at a time (each page reads at most 200 records): follow the pages.
  async function stagedPages() {
    var staged = [], token = null;
    for (var i = 0; i < 25; i++) {
      var d = await api('GET', '/review/staged?limit=200' + (token ? '&nextToken=' + encodeURIComponent(token) : ''));
      staged = staged.concat(d.staged || []);
      token = d.nextToken;
      if (!token) break;
    }
    return { staged: staged };
  }

  function loadStaged() {
    return section('staged', stagedPages, function (d) {
      var staged = d.staged || [];
      if (!staged.length) return 'nothing staged';
      return el('div', {}, staged.map(function (it) {
        var history = Array.isArray(it.history) ? it.history : [];
        var promote = el('button', { class: 'promote', type: 'button', text: 'Promote' });
        var discard = el('button', { class: 'discard', type: 'button', text: 'Discard' });
        promote.addEventListener('click', function () { review('promote', it, [promote, discard]); });
        discard.addEventListener('click', function () { review('discard', it, [promote, discard]); });
        return el('div', { class: 'item staged-item', 'data-path': str(it.path) }, [
          el('div', { class: 'title' }, [str(it.title), el('span', { class: 'badge', text: str(it.kind) }), it.status && it.status !== it.kind ? el('span', { class: 'badge', text: str(it.status) }) : null]),
          el('div', { class: 'path', text: str(it.path) }),
          el('div', { class: 'text', text: clip(it.text, 300), title: str(it.text) }),
          el('div', { class: 'meta', text: 'promotion count ' + num(it.promotionCount) + ' / ' + num(it.promotionsNeeded) + ' · confidence ' + num(it.confidence, 2) + ' · turns ' + turns(it.sourceTurns) }),
          el('details', {}, [
            el('summary', { text: 'gate history (' + history.length + ')' }),
            el('ol', {}, history.map(function (h) {
              return el('li', {}, [el('b', { text: str(h.event) }), ' ' + when(h.at) + (h.batchId ? ' · ' + str(h.batchId) : '') + ' — ' + str(h.detail)]);
            })),
          ]),
          el('div', { class: 'actions' }, [promote, discard]),
        ]);
      }));
    });
  }

  // Seed 003's reflection quality metrics, above the summaries they are about.
  function qualityLine(q) {
    if (!q) return null;
    var topics = (q.topics || []).map(function (t) { return str(t.topic) + ' (' + num(t.summaries) + ')'; }).join(', ');
    return el('div', { class: 'meta quality', 'data-resurrections-of-deleted': str(q.resurrectionsOfDeleted) }, [
      num(q.summaries) + ' summaries · ' + num(q.deleted) + ' deleted (' + (100 * q.deletionRate).toFixed(0) + '%) · resurrected ' + num(q.resurrections) + '× over ' + num(q.resurrected) + ' (' + (100 * q.resurrectionRate).toFixed(0) + '%) · back after deletion ' + num(q.resurrectionsOfDeleted) + (topics ? ' · topics: ' + topics : ''),
    ]);
  }

  function loadReflections() {
    var both = async function () {
      var got = await Promise.all([api('GET', '/summaries'), api('GET', '/reflections/quality')]);
      return { summaries: got[0].summaries, quality: got[1].quality };
    };
    return section('reflections', both, function (d) {
      // Seed 003: each summary is a turn pair in the conversation, after the last turn it covers.
      var summaries = (d.summaries || []).slice().sort(function (a, b) { return (a.afterTurn || 0) - (b.afterTurn || 0); });
      if (!summaries.length) return 'no context summaries';
      return el('div', {}, [qualityLine(d.quality)].concat(summaries.map(function (s) {
        var del = el('button', { class: 'delete', type: 'button', text: 'Delete' });
        del.addEventListener('click', async function () {
          del.disabled = true;
          try {
            await api('DELETE', '/summaries/' + encodeURIComponent(str(s.id)));
            setStatus('deleted summary ' + str(s.id), 'ok');
          } catch (e) { setStatus('delete failed: ' + e.message, 'error'); }
          await loadReflections();
        });
        return el('div', { class: 'item summary-item', 'data-id': str(s.id) }, [
          el('div', { class: 'meta' }, ['after turn ' + num(s.afterTurn) + ' · ', when(s.createdAt), el('span', { class: 'badge', text: str(s.kind) }), ' turns ' + turns(s.sourceTurns), s.deleted ? el('span', { class: 'badge', text: 'deleted' }) : null, s.edits && s.edits.length ? el('span', { class: 'badge', text: 'edited' }) : null]),
          el('div', { class: 'text reflection-system' }, [el('span', { class: 'badge', text: 'system · reflection' }), ' ' + str(s.prompt)]),
          el('div', { class: 'text reflection-assistant' }, [el('span', { class: 'badge', text: 'assistant · reflection' }), ' ' + str(s.text)]),
          el('div', { class: 'actions' }, [del]),
        ]);
      })));
    });
  }

  // Seed 004 P3-M2/M3: the diary, every batch's attempt; a person keeps a rejected one or drops a written one.
  function loadDiary() {
    return section('diary', '/diary?include=all&limit=50', function (d) {
      var entries = d.entries || [];
      if (!entries.length) return 'no diary entries yet';
      return el('div', {}, entries.map(function (e) {
        var decision = e.visible ? 'drop' : 'keep';
        var act = el('button', { class: decision, type: 'button', text: e.visible ? 'Drop' : 'Keep' });
        act.addEventListener('click', async function () {
          act.disabled = true;
          try {
            await api('POST', '/diary/' + encodeURIComponent(str(e.id)), { decision: decision });
            setStatus((decision === 'keep' ? 'kept' : 'dropped') + ' diary entry ' + str(e.id), 'ok');
          } catch (err) { setStatus('diary ' + decision + ' failed: ' + err.message, 'error'); }
          await loadDiary();
        });
        var state = e.override ? (e.override.decision === 'keep' ? 'kept' : 'dropped') : (e.written ? 'written' : 'rejected');
        var r = e.reflection;
        var criteria = Object.keys(e.criteria || {}).filter(function (k) { return (e.criteria[k] || []).length; });
        return el('div', { class: 'item diary-item', 'data-id': str(e.id), 'data-visible': String(!!e.visible) }, [
          el('div', { class: 'meta' }, [when(e.at), el('span', { class: 'badge', text: str(e.type) }), el('span', { class: 'badge', text: state }), ' ' + str(e.trigger) + ' · turns ' + turns(e.turns)]),
          r ? el('div', { class: 'text' }, ['insight: ' + str(r.insight) + ' · recommendation: ' + str(r.recommendation) + ' · confidence ' + Number(r.confidence).toFixed(2)]) : null,
          el('div', { class: 'meta' }, [criteria.length ? 'criteria: ' + criteria.join(', ') : str(e.reason), e.emotion ? ' · ' + assessment(e.emotion) : '']),
          el('div', { class: 'actions' }, [act]),
        ]);
      }));
    });
  }

  // Seed 004 P3-M2: the model's assessment after the batch (confidence, caution, the user's sentiment).
  function assessment(a) {
    if (!a || typeof a !== 'object') return '–';
    var mood = Number(a.sentiment);
    return 'confidence ' + Number(a.confidence).toFixed(2) + ' · caution ' + Number(a.caution).toFixed(2) + ' · sentiment ' + (mood > 0 ? '+' : '') + mood.toFixed(2);
  }

  function loadBatches() {
    return section('batches', '/batches?limit=50', function (d) {
      var batches = d.batches || [];
      if (!batches.length) return 'no batches yet';
      return table(['time', 'batch', 'trigger', 'status', 'turns', 'proposed', 'passed', 'rejected', 'staged', 'promoted', 'assessment'], batches.map(function (b) {
        return [when(b.timestamp), b.batchId, b.trigger, b.status, el('td', { class: 'wrap', text: turns(b.turns) }),
          num(b.itemsProposed), num(b.itemsPassed), count(b.rejections), count(b.staged), count(b.promoted), assessment(b.assessment)];
      }));
    });
  }

  var SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function chart(points) {
    var W = 600, H = 200, L = 44, R = 16, T = 24, B = 30;
    var xs = points.map(function (p) { return Date.parse(p.startedAt); });
    var ys = points.map(function (p) { return typeof p.issuesPerSession === 'number' ? p.issuesPerSession : 0; });
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    var yMax = (Math.max.apply(null, ys.concat([0])) * 1.1) || 1;
    var px = function (x) { return x1 === x0 ? L + (W - L - R) / 2 : L + (x - x0) / (x1 - x0) * (W - L - R); };
    var py = function (y) { return T + (1 - y / yMax) * (H - T - B); };
    var s = svg('svg', { id: 'trend-chart', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'issues per session over time' });
    s.appendChild(svg('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#9aa5b1' }));
    s.appendChild(svg('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#9aa5b1' }));
    [0, 0.5, 1].forEach(function (f) {
      var y = py(yMax * f);
      if (f > 0) s.appendChild(svg('line', { x1: L, y1: y, x2: W - R, y2: y, stroke: '#eef1f5' }));
      s.appendChild(svg('text', { x: L - 6, y: y + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#66727f' }, (yMax * f).toFixed(2)));
    });
    var ticks = points.length > 2 ? [0, Math.floor((points.length - 1) / 2), points.length - 1] : points.map(function (p, i) { return i; });
    ticks.forEach(function (i, n) {
      var anchor = ticks.length === 1 ? 'middle' : n === 0 ? 'start' : n === ticks.length - 1 ? 'end' : 'middle';
      s.appendChild(svg('text', { x: px(xs[i]), y: H - 10, 'text-anchor': anchor, 'font-size': 11, fill: '#66727f' }, str(points[i].startedAt).slice(0, 10)));
    });
    s.appendChild(svg('text', { x: 4, y: 12, 'font-size': 11, fill: '#66727f' }, 'issues per session'));
    var order = xs.map(function (x, i) { return i; }).sort(function (a, b) { return xs[a] - xs[b]; });
    s.appendChild(svg('polyline', { points: order.map(function (i) { return px(xs[i]) + ',' + py(ys[i]); }).join(' '), fill: 'none', stroke: '#2f6fde', 'stroke-width': 2 }));
    order.forEach(function (i) {
      var c = svg('circle', { cx: px(xs[i]), cy: py(ys[i]), r: 4, fill: '#fff', stroke: '#2f6fde', 'stroke-width': 2 });
      c.appendChild(svg('title', {}, when(points[i].startedAt) + ': ' + ys[i] + ' issues/session over ' + num(points[i].sessionsReviewed) + ' sessions'));
      s.appendChild(c);
    });
    return s;
  }

  function loadAssessment() {
    return section('assessment', '/reflections/assessment?days=365', function (d) {
      var a = d.assessment || {};
      var points = (d.points || []).filter(function (p) { return !isNaN(Date.parse(p.startedAt)); });
      var stat = function (v, label) { return el('div', { class: 'stat' }, [el('b', { text: v }), el('span', { text: label })]); };
      return el('div', {}, [
        el('div', { class: 'stats' }, [
          stat(num(a.runs), 'runs'), stat(num(a.sessionsReviewed), 'sessions reviewed'), stat(str(a.trend || '–').replace(/_/g, ' '), 'trend'),
          stat(pct(a.correctionRate), 'correction rate'), stat(pct(a.unresolvedRate), 'unresolved rate'), stat(num(a.contradictionCount), 'contradictions'),
        ]),
        points.length < 1 ? el('p', { class: 'msg', text: 'no nightly runs yet' }) : chart(points),
      ]);
    });
  }

  function loadLog() {
    return section('log', '/reflections?limit=20', function (d) {
      var runs = d.runs || [];
      if (!runs.length) return 'no reflection runs yet';
      return table(['started', 'kind', 'status', 'sessions', 'memories stored', 'findings'], runs.map(function (r) {
        var f = r.findingsByCategory || {};
        var findings = Object.keys(f).map(function (k) { return k + ' ' + str(f[k]); }).join(', ') || '–';
        return [when(r.startedAt), r.kind, r.status, num(r.sessionsReviewed), num(r.memoriesStored), el('td', { class: 'wrap', text: findings })];
      }));
    });
  }

  function loadAll() {
    state.user = $('user').value.trim();
    state.token = $('token').value.trim();
    if (!state.user || !state.token) { setStatus('enter both a token and a user id', 'error'); return; }
    try { sessionStorage.setItem('console.user', state.user); sessionStorage.setItem('console.token', state.token); } catch (e) { /* storage unavailable */ }
    setStatus('loading ' + state.user + '…');
    Promise.all([loadKnowledge(), loadStaged(), loadReflections(), loadDiary(), loadBatches(), loadAssessment(), loadLog()])
      .then(function () { if (!$('status').className) setStatus('loaded ' + state.user); });
  }

  // #user=<id>&token=<tok>; split by hand so a '+' in a token stays a '+'.
  function fromHash() {
    var out = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (part) {
      var i = part.indexOf('=');
      if (i > 0) { try { out[decodeURIComponent(part.slice(0, i))] = decodeURIComponent(part.slice(i + 1)); } catch (e) { /* malformed */ } }
    });
    return out;
  }

  $('login').addEventListener('submit', function (ev) { ev.preventDefault(); loadAll(); });
  var h = fromHash(), stored = {};
  try { stored = { user: sessionStorage.getItem('console.user'), token: sessionStorage.getItem('console.token') }; } catch (e) { /* storage unavailable */ }
  $('user').value = h.user || stored.user || '';
  $('token').value = h.token || stored.token || '';
  if (h.user && h.token) loadAll();
})();
</script>
</body>
</html>
`;
}
