// @ts-check
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The review console's panels, every one loaded for the user and token typed in.
// One part of the console script (console-shared.js says how the parts are joined).

import { $, input, setStatus, state } from './console-shared.js';
import { loadKnowledge, loadSummaries } from './console-knowledge.js';
import { loadAssessment, loadBatches, loadLog } from './console-runs.js';
import { loadDiary, loadStaged } from './console-review.js';

export function loadAll() {
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
