/**
 * A read-modify-write of one user's signal state, conditional on the version it read (the store's
 * `save` refuses a state written meanwhile): read, change, save; again on a lost race.
 */
import { parseSignalState, type SignalState } from './signal-state.js';
import type { SignalStateStore } from './signal-state.port.js';

const ATTEMPTS = 5;

/**
 * `change` gives the next state, or null to leave it as it is. True once saved or left; false
 * when every attempt lost its race to another writer.
 */
export async function changeSignalState(
  store: Pick<SignalStateStore, 'load' | 'save'>,
  userId: string,
  change: (state: SignalState) => SignalState | null,
): Promise<boolean> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const stored = await store.load(userId);
    const next = change(parseSignalState(stored.raw).state);
    if (next === null || (await store.save(userId, next, stored.version))) return true;
  }
  return false;
}
