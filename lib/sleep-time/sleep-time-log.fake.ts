/** An in-memory sleep-time run log for tests, with a recording variant. */
import { keys } from '../kernel/memory-paths.js';
import type { SleepTimeRun } from './run-log.js';
import type { WriteLog } from '../kernel/write-log.fake.js';
import type { SleepTimeLogStore } from './sleep-time-log.port.js';

export class MemorySleepTimeLog implements SleepTimeLogStore {
  readonly runs: SleepTimeRun[] = [];
  async exists(run: Pick<SleepTimeRun, 'userId' | 'kind' | 'startedAt' | 'runId'>) {
    return this.runs.some(
      (r) => r.userId === run.userId && r.kind === run.kind && r.startedAt === run.startedAt && r.runId === run.runId,
    );
  }
  async put(run: SleepTimeRun) {
    this.runs.push(structuredClone(run));
  }
  async list(userId: string, kind: SleepTimeRun['kind'], fromIso: string, toIso: string) {
    return this.runs
      .filter((r) => r.userId === userId && r.kind === kind && r.startedAt >= fromIso && r.startedAt <= toIso)
      .sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  }
  async newest(userId: string, kind: SleepTimeRun['kind'], limit: number) {
    return this.runs
      .filter((r) => r.userId === userId && r.kind === kind)
      .sort((a, b) => b.startedAt.localeCompare(a.startedAt))
      .slice(0, limit);
  }
  async latest(userId: string, kind: SleepTimeRun['kind']) {
    return (await this.newest(userId, kind, 1))[0] ?? null;
  }
}

const ddbKey = (userId: string, sk: string) => `${keys.ownerPk(userId)}|${sk}`;

export class RecordingSleepTimeLog extends MemorySleepTimeLog {
  constructor(private readonly log: WriteLog) {
    super();
  }
  override async put(run: SleepTimeRun) {
    this.log.addItem('runs', run.userId, ddbKey(run.userId, keys.runSk(run.kind, run.startedAt, run.runId)), { run });
    return super.put(run);
  }
}
