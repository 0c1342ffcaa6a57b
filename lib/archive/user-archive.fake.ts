/** An archive store for tests that records every restored record and document. */
import { GLOBAL_USER } from '../items/memory-item.js';
import { userPrefix } from '../kernel/memory-paths.js';
import type { UserArchiveStore } from './user-archive.port.js';
import type { ArchiveDocument } from './user-archive.js';
import type { WriteLog } from '../kernel/write-log.fake.js';

/** Export and import (lib/archive/archive-api.ts): nothing to export; every restored record and document recorded, under the user its key names. */
export class RecordingArchiveStore implements UserArchiveStore {
  constructor(private readonly log: WriteLog) {}
  async records() {
    return [];
  }
  async documents() {
    return [];
  }
  async putRecords(records: ReadonlyArray<Record<string, unknown>>) {
    for (const r of records) {
      const pk = String(r.pk);
      this.log.addItem(
        'archives',
        pk === 'GLOBAL' ? GLOBAL_USER : pk.replace(/^USER#/, ''),
        `${pk}|${String(r.sk)}`,
        r,
      );
    }
  }
  async putDocuments(userId: string, documents: readonly ArchiveDocument[]) {
    for (const d of documents) this.log.add('archives', userId, `${userPrefix(userId)}${d.path}`);
  }
}
