/** In-memory source reliability counts for tests, with a recording variant. */
import { type SourceObservation, addObservation, emptyStats, type SourceStats } from './source-reliability.js';
import { keys } from '../kernel/memory-paths.js';
import { sourceShard } from './dynamo-source-reliability-store.adapter.js';
import type { WriteLog } from '../kernel/write-log.fake.js';
import type { SourceReliabilityStore } from './source-reliability.port.js';

/** Source outcomes per domain, counted once per (user, observation key), as the DynamoDB store does. */
export class MemorySourceReliabilityStore implements SourceReliabilityStore {
  readonly counts = new Map<string, SourceStats>();
  readonly seen = new Set<string>();
  async record(userId: string, observations: readonly SourceObservation[]) {
    let added = 0;
    for (const o of observations) {
      const marker = `${userId}/${o.key}`;
      if (this.seen.has(marker)) continue;
      this.seen.add(marker);
      this.counts.set(o.domain, addObservation(this.counts.get(o.domain) ?? emptyStats(o.domain), o));
      added++;
    }
    return added;
  }
  async stats(domains: readonly string[]) {
    return domains.map((d) => structuredClone(this.counts.get(d) ?? emptyStats(d)));
  }
}

const ddbKey = (userId: string, sk: string) => `${keys.ownerPk(userId)}|${sk}`;

export class RecordingSourceReliability extends MemorySourceReliabilityStore {
  constructor(private readonly log: WriteLog) {
    super();
  }
  override async record(userId: string, observations: readonly SourceObservation[]) {
    for (const o of observations) {
      this.log.addItem('sources', userId, ddbKey(userId, keys.sourceObservationSk(o.key)), { domain: o.domain });
      this.log.add('sources', null, `${keys.sourcePk(o.domain, sourceShard(userId))}|${keys.sourceStatsSk}`);
    }
    return super.record(userId, observations);
  }
}
