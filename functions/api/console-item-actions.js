// @ts-check
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The review console's item actions: a person's delete, edit and undo of an item's last contradiction.
// One part of the console script (console-shared.js says how the parts are joined).

import { api, el, num, setStatus, str } from './console-shared.js';

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
export function itemActions(id, text, then) {
  const del = el('button', { type: 'button', class: 'delete', text: 'Delete' });
  del.addEventListener('click', () => deleteItem(id, then));
  const buttons = [del];
  if (/^(knowledge|summary):/.test(id)) {
    const edit = el('button', { type: 'button', class: 'edit', text: 'Edit' });
    edit.addEventListener('click', () => editItem(id, text, then));
    buttons.push(edit);
  }
  if (/^(mem|knowledge):/.test(id)) {
    const undo = el('button', { type: 'button', class: 'undo', text: 'Undo contradiction' });
    undo.addEventListener('click', () => undoContradiction(id, then));
    buttons.push(undo);
  }
  return el('div', { class: 'actions' }, buttons);
}
