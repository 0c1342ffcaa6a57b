/** In-memory signal state, activity index and idle scheduler for tests, with recording variants. */
import type { IdleCheck } from '../../events/idle-check.js';
import { keys } from '../kernel/memory-paths.js';
import type { SignalState } from './signal-state.js';
import type { WriteLog } from '../kernel/write-log.fake.js';
import type { ActivityIndex, IdleScheduler, SignalStateStore, StoredSignalState } from './signal-state.port.js';

export class MemorySignalStateStore implements SignalStateStore, ActivityIndex {
  readonly items = new Map<string, { raw: unknown; version: number }>();
  /** Activity markers: user → days. */
  readonly markers = new Map<string, Set<string>>();
  saves = 0;
  async load(userId: string): Promise<StoredSignalState> {
    const item = this.items.get(userId);
    return item ? { raw: structuredClone(item.raw), version: item.version } : { raw: undefined, version: null };
  }
  async save(userId: string, state: SignalState, expected: number | null) {
    const current = this.items.get(userId);
    if ((current?.version ?? null) !== expected) return false;
    this.saves++;
    this.items.set(userId, { raw: structuredClone(state), version: (expected ?? 0) + 1 });
    return true;
  }
  state(userId: string): SignalState {
    return this.items.get(userId)?.raw as SignalState;
  }
  async markActive(marks: ReadonlyArray<{ userId: string; day: string }>) {
    for (const { userId, day } of marks) this.markers.set(userId, new Set([...(this.markers.get(userId) ?? []), day]));
  }
  async activeUsers(days: readonly string[]) {
    return [...this.markers.entries()]
      .filter(([, marked]) => days.some((d) => marked.has(d)))
      .map(([userId]) => ({
        userId,
        activity: { ...((this.items.get(userId)?.raw as SignalState | undefined)?.activity ?? {}) },
      }))
      .sort((a, b) => a.userId.localeCompare(b.userId));
  }
}

export class MemoryIdleScheduler implements IdleScheduler {
  readonly checks: Array<{ check: IdleCheck; delaySeconds: number }> = [];
  async schedule(check: IdleCheck, delaySeconds: number) {
    this.checks.push({ check, delaySeconds });
  }
}

/** An activity index whose users were marked on every day their counts name. */
export class MemoryActivity implements ActivityIndex {
  readonly users: Array<{ userId: string; activity: Record<string, number> }> = [];
  async activeUsers(days: readonly string[]) {
    return this.users.filter((u) => Object.keys(u.activity).some((d) => days.includes(d)));
  }
}

const ddbKey = (userId: string, sk: string) => `${keys.ownerPk(userId)}|${sk}`;

export class RecordingSignalState extends MemorySignalStateStore {
  constructor(private readonly log: WriteLog) {
    super();
  }
  override async save(userId: string, state: SignalState, expected: number | null) {
    this.log.addItem('signalState', userId, ddbKey(userId, keys.signalSk), state);
    return super.save(userId, state, expected);
  }
}

export class RecordingIdleScheduler extends MemoryIdleScheduler {
  constructor(private readonly log: WriteLog) {
    super();
  }
  override async schedule(check: IdleCheck, delaySeconds: number) {
    this.log.add('idle', check.userId);
    return super.schedule(check, delaySeconds);
  }
}
