/** A fixed clock and a log that keeps its entries, for tests. */
import type { Log } from './runtime.port.js';

export class RecordingLog implements Log {
  readonly entries: Array<{ level: string; message: string; extra?: Record<string, unknown> }> = [];
  debug = (message: string, extra?: Record<string, unknown>) =>
    void this.entries.push({ level: 'debug', message, ...(extra ? { extra } : {}) });
  info = (message: string, extra?: Record<string, unknown>) =>
    void this.entries.push({ level: 'info', message, ...(extra ? { extra } : {}) });
  warn = (message: string, extra?: Record<string, unknown>) =>
    void this.entries.push({ level: 'warn', message, ...(extra ? { extra } : {}) });
  error = (message: string, extra?: Record<string, unknown>) =>
    void this.entries.push({ level: 'error', message, ...(extra ? { extra } : {}) });
}

export const fixedClock = (iso = '2026-02-06T14:30:00.000Z') => ({ now: () => new Date(iso) });
