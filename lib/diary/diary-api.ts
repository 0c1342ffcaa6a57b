/**
 * The diary through the API: its entries newest first — the
 * selective diary's observations and the model's reflections on agent.events, with the
 * rejected attempts on request — and a person's override, which keeps an entry the criteria
 * rejected or drops one they wrote (req R-DIARY-4: "manual diary commands always create
 * entries"). Either is audited and reaches search (content type `diary`).
 */
import { type DiaryRecord, diaryMarkdown, diaryVisible } from './diary.js';
import type { Clock } from '../kernel/runtime.port.js';
import type { DiaryStore } from './diary.port.js';
import { MemoryApiError, pageCursor, encodeCursor } from '../memory-api/memory-api.js';
import type { SignalStateStore } from '../signals/signal-state.port.js';
import { parseSignalState } from '../signals/signal-state.js';
import type { AuditTrail } from '../items/memory-item.port.js';
import { manualDiaryRecord } from './manual-entry.js';

export interface DiaryDeps {
  diary: DiaryStore;
  clock: Clock;
}

/** What writing an entry by hand needs besides: where the user's turns stand, and the audit trail. */
export type ManualDiaryDeps = DiaryDeps & {
  signalState: Pick<SignalStateStore, 'load'>;
  audit: Pick<AuditTrail, 'appendOnce'>;
};

/** An entry as the API shows it: its record, whether it is visible, and its markdown (rendered from the record). */
export type DiaryEntryView = DiaryRecord & { visible: boolean; markdown: string };

const view = (r: DiaryRecord): DiaryEntryView => ({ ...r, visible: diaryVisible(r), markdown: diaryMarkdown(r) });

/** A page of the user's entries, newest first: the visible ones, or (`include: 'all'`) every attempt. */
export async function listDiary(
  deps: DiaryDeps,
  userId: string,
  q: {
    limit: number;
    nextToken?: string | undefined;
    type?: DiaryRecord['type'] | undefined;
    include: 'visible' | 'all';
  },
): Promise<{ entries: DiaryEntryView[]; nextToken?: string }> {
  const after =
    q.nextToken === undefined
      ? undefined
      : pageCursor(q.nextToken, (p) =>
          Array.isArray(p) && p[0] === 'diary' && typeof p[1] === 'string' ? p[1] : null,
        );
  const page = await deps.diary.page(userId, { limit: q.limit, after, type: q.type });
  const entries = page.entries.map(view).filter((e) => q.include === 'all' || e.visible);
  return { entries, ...(page.next !== undefined ? { nextToken: encodeCursor(['diary', page.next]) } : {}) };
}

/** A person keeps or drops an entry (the latest decision wins), in the audit trail. */
export async function overrideDiary(
  deps: DiaryDeps,
  actor: string,
  userId: string,
  id: string,
  req: { decision: 'keep' | 'drop'; reason?: string | undefined },
): Promise<{ entry: DiaryEntryView }> {
  const at = deps.clock.now().toISOString();
  const reason = req.reason ? { reason: req.reason } : {};
  const audit = {
    userId,
    itemId: `diary:${id}`,
    action: req.decision === 'keep' ? ('diary_keep' as const) : ('diary_drop' as const),
    actor,
    at,
    ...reason,
  };
  const record = await deps.diary.override(userId, id, { decision: req.decision, by: actor, at, ...reason }, audit);
  if (!record) throw new MemoryApiError('not_found', `diary entry ${id} of ${userId} not found`);
  return { entry: view(record) };
}

/**
 * A person's or an agent's diary entry (seed 004 M3: "manual diary commands always create
 * entries"): written whatever the criteria say, placed after the user's latest turn, audited
 * (`create`). Its id comes from its words and that turn, so a retried request writes one entry.
 */
export async function writeDiary(
  deps: ManualDiaryDeps,
  actor: string,
  userId: string,
  req: { text: string; turns?: number[] | undefined },
): Promise<{ entry: DiaryEntryView }> {
  const { lastTurnId } = parseSignalState((await deps.signalState.load(userId)).raw).state;
  const record = manualDiaryRecord({
    userId,
    actor,
    text: req.text,
    turns: req.turns ?? [],
    lastTurnId,
    at: deps.clock.now(),
  });
  await deps.diary.put(record);
  const [stored] = await deps.diary.byIds(userId, [record.id]);
  const entry = stored ?? record;
  await deps.audit.appendOnce({
    userId,
    itemId: `diary:${entry.id}`,
    action: 'create',
    actor,
    at: entry.at,
    reason: 'manual diary entry',
  });
  return { entry: view(entry) };
}
