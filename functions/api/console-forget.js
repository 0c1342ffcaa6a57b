// @ts-check
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The review console's forget panel.
// One part of the console script (console-shared.js says how the parts are joined).

import { api, el, input, num, section, setStatus, table, turns } from './console-shared.js';
import { loadAll } from './console-panels.js';

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
export function forget(dryRun) {
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
