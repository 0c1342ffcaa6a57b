/**
 * Forget by provenance (req R-DEL-3, R-DEL-4): POST …/memory/forget with turns or a session.
 * Those turns go (index entries, documents, claim checks, every S3 version) with every item
 * derived from any of them — staged records, Knowledge facts and nightly findings, summaries,
 * agent.event episodes, diary entries, mem: items — and the graph edges whose only evidence
 * they were, each by its kind's removal (erase.ts), all hard. The turns are recorded as
 * forgotten first, so that a job already queued for them writes nothing (run-job.ts).
 *
 * The receipt names what is removed by kind, ids only; a dry run plans the same removal and
 * answers the same receipt without changing anything. One request removes at most
 * MAX_FORGET_TURNS turns (docs/memory-api.md, "Forget by provenance": a larger session is
 * forgotten in parts by `turns`), so the work fits the API's invocation.
 */
import { MemoryApiError } from '../memory-api/memory-api-error.js';
import type { MemoryApiDeps } from '../memory-api/deps.js';
import {
  edgesOnlyEvidencedBy,
  type ErasedKind,
  eraseDiary,
  eraseEventEpisodes,
  eraseKnowledge,
  eraseMemories,
  eraseStaged,
  eraseSummaries,
  eraseTraces,
  eraseTurns,
  removeEdges,
} from './erase.js';
import type { DiaryRecord } from '../diary/diary.js';

/** Most turns one forget removes: each turn costs up to three S3 listings and a delete (see docs/memory-api.md). */
export const MAX_FORGET_TURNS = 500;
/** Diary entries read per page while a forget looks for those citing the turns. */
const DIARY_PAGE = 500;

export interface ForgetRequest {
  turns?: number[] | undefined;
  sessionId?: string | undefined;
  dryRun: boolean;
  reason?: string | undefined;
}

export interface ForgetReceipt {
  dryRun: boolean;
  turns: number[];
  removed: Record<ErasedKind, string[]>;
  total: number;
}

export async function forgetByProvenance(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  req: ForgetRequest,
): Promise<{ receipt: ForgetReceipt }> {
  const turns = await turnsToForget(deps, userId, req);
  const plan = await planForget(deps, userId, new Set(turns), req.sessionId);
  const receipt = receiptOf(req.dryRun, turns, plan);
  if (req.dryRun || receipt.total === 0) return { receipt };
  const at = deps.clock.now().toISOString();
  // First: from here on, a job citing these turns writes nothing (run-job.ts).
  await deps.erasures.forgetTurns(userId, turns, at);
  // What derives from the turns before the turns: a forget cut short and asked again by session still finds them.
  await eraseEventEpisodes(deps, userId, plan.episodes);
  await eraseStaged(deps, userId, plan.staged, at);
  await eraseKnowledge(deps, userId, plan.knowledge, at);
  await eraseSummaries(deps, userId, plan.summaries);
  await eraseDiary(deps, userId, plan.diary);
  await eraseMemories(deps, userId, plan.memories);
  await removeEdges(deps, userId, plan.edges, at, 'its only evidence was forgotten by provenance');
  await eraseTurns(deps, userId, plan.turns);
  await eraseTraces(
    deps,
    userId,
    Object.entries(receipt.removed).flatMap(([kind, ids]) => (kind === 'graphEdge' ? [] : ids)),
  );
  const why = req.reason ? { reason: req.reason } : {};
  await deps.audit.append(
    Object.entries(receipt.removed).flatMap(([kind, ids]) =>
      ids.map((itemId) => ({
        userId,
        itemId,
        action: 'forget' as const,
        actor,
        at,
        note: `${kind} forgotten by provenance`,
        ...why,
      })),
    ),
  );
  return { receipt };
}

/** The turns asked for (those the index holds), or the session's; at most MAX_FORGET_TURNS. */
async function turnsToForget(deps: MemoryApiDeps, userId: string, req: ForgetRequest): Promise<number[]> {
  const tooMany = (field: string) =>
    new MemoryApiError(
      'too_large',
      `${field}: at most ${MAX_FORGET_TURNS} turns are forgotten in one request; forget the rest by \`turns\` in further requests`,
      [{ path: `body.${field}`, message: `more than ${MAX_FORGET_TURNS} turns` }],
    );
  if (req.sessionId !== undefined) {
    const turns = await deps.eraser.sessionTurns(userId, req.sessionId, MAX_FORGET_TURNS);
    if (turns.length > MAX_FORGET_TURNS) throw tooMany('sessionId');
    return turns;
  }
  const asked = [...new Set(req.turns ?? [])].sort((a, b) => a - b);
  if (asked.length > MAX_FORGET_TURNS) throw tooMany('turns');
  return asked;
}

interface Plan {
  turns: number[];
  episodes: string[];
  staged: Awaited<ReturnType<MemoryApiDeps['knowledge']['listStaged']>>;
  knowledge: Awaited<ReturnType<MemoryApiDeps['knowledge']['loadKnowledge']>>;
  summaries: string[];
  diary: string[];
  memories: string[];
  edges: Awaited<ReturnType<MemoryApiDeps['graph']['load']>>['edges'];
}

/** What citing the turns means: any source turn among them (a mem: item of the forgotten session too). */
async function planForget(
  deps: MemoryApiDeps,
  userId: string,
  turns: ReadonlySet<number>,
  sessionId: string | undefined,
): Promise<Plan> {
  const cites = (sourceTurns: readonly number[] | undefined) => (sourceTurns ?? []).some((t) => turns.has(t));
  if (turns.size === 0)
    return { turns: [], episodes: [], staged: [], knowledge: [], summaries: [], diary: [], memories: [], edges: [] };
  const [indexed, episodes, staged, knowledge, summaries, diary, memories, graph] = await Promise.all([
    deps.turns.indexedTurnIds(userId, [...turns]),
    deps.turns.eventEpisodes(userId),
    deps.knowledge.listStaged(userId),
    deps.knowledge.loadKnowledge(userId),
    deps.summaries.list(userId),
    allDiary(deps, userId),
    deps.items.list(userId),
    deps.graph.load(userId),
  ]);
  return {
    turns: [...indexed].sort((a, b) => a - b),
    episodes: episodes
      .filter(
        (e) =>
          (e.turnId !== undefined && turns.has(e.turnId)) || (sessionId !== undefined && e.sessionId === sessionId),
      )
      .map((e) => e.episodeId),
    staged: staged.filter((r) => cites(r.sourceTurns)),
    knowledge: knowledge.filter((d) => cites(d.sourceTurns)),
    summaries: summaries.filter((s) => cites(s.sourceTurns)).map((s) => s.id),
    diary: diary.filter((r) => cites(r.turns)).map((r) => r.id),
    memories: memories
      .filter((m) => cites(m.sourceTurns) || (sessionId !== undefined && m.sessionId === sessionId))
      .map((m) => m.id),
    edges: edgesOnlyEvidencedBy(graph.edges, { turns }),
  };
}

async function allDiary(deps: MemoryApiDeps, userId: string): Promise<DiaryRecord[]> {
  const out: DiaryRecord[] = [];
  let after: string | undefined;
  do {
    const page = await deps.diary.page(userId, { limit: DIARY_PAGE, after });
    out.push(...page.entries);
    after = page.next;
  } while (after !== undefined);
  return out;
}

function receiptOf(dryRun: boolean, turns: number[], plan: Plan): ForgetReceipt {
  const sorted = (ids: string[]) => [...new Set(ids)].sort();
  const removed: Record<ErasedKind, string[]> = {
    turn: plan.turns.map((t) => `turn:${t}`),
    episode: sorted(plan.episodes.map((e) => `episode:${e}`)),
    staged: sorted(plan.staged.map((r) => `staged:${r.path}`)),
    knowledge: sorted(plan.knowledge.map((d) => `knowledge:${d.id}`)),
    summary: sorted(plan.summaries.map((s) => `summary:${s}`)),
    diary: sorted(plan.diary.map((d) => `diary:${d}`)),
    memory: sorted(plan.memories),
    graphEdge: sorted(plan.edges.map((e) => e.id)),
  };
  return { dryRun, turns, removed, total: Object.values(removed).reduce((n, ids) => n + ids.length, 0) };
}
