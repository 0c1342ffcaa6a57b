/** A batch's answer through the quality gates, staged or reinforcing (req R-GATE, R-STG, R-PRO), its episodes and edges written. */
import type { Job } from '../../events/job.js';
import type { TurnSaved } from '../../events/turn-saved.js';
import type { BatchLog } from './batch-log.js';
import { applyQualityGates } from './quality-gates.js';
import { userPrefix } from '../kernel/memory-paths.js';
import type { parseBatchAnswer } from './batch-answer.js';
import { findRecurrences, PROMOTIONS_TO_KNOWLEDGE } from '../knowledge/promotion.js';
import { promoteStaged } from '../knowledge/promote-staged.js';
import { domainsRead, type StagedDocument, stagedDocuments } from '../knowledge/staging.js';
import { buriedKeyOf, tombstoneKeys } from '../forget/tombstone.js';
import { reliabilityOf } from '../sources/source-reliability.js';
import { episodeDocument } from '../turns/episodes.js';
import { verifySeenFacts } from '../knowledge/maintain-facts.js';
import { recordRelations } from '../graph/graph-use-cases.js';
import type { ReflectionDeps } from './reflection-deps.js';
import type { BatchInput } from './batch-input.js';

const round2 = (n: number) => Math.round(n * 100) / 100;

export type Parsed = ReturnType<typeof parseBatchAnswer>;

/** The model's output through the quality gates, as staged documents, with the facts it saw again verified. */
export interface Gated {
  output: Parsed['output'];
  passed: ReturnType<typeof applyQualityGates>['passed'];
  rejections: ReturnType<typeof applyQualityGates>['rejections'];
  docs: ReturnType<typeof stagedDocuments>;
  verified: string[];
  /** The batch's turns and the others its items cite, by id. */
  turns: ReadonlyMap<number, TurnSaved>;
}

export async function gateOutput(
  job: Job,
  input: BatchInput,
  parsed: Parsed | null,
  deps: ReflectionDeps,
): Promise<Gated> {
  const { turns, knowledge, knowledgeDocs, batchAt } = input;
  const turnMap = new Map<number, TurnSaved>(turns.map((t) => [t.turnId, t]));
  const output = parsed?.output ?? { new_facts: [], corrections: [], connections: [], open_questions: [] };
  const cited = [
    ...new Set(
      Object.values(output).flatMap((items) =>
        (items as Array<{ source_turns: number[] }>).flatMap((i) => i.source_turns),
      ),
    ),
  ];
  const outside = cited.filter((t) => !turnMap.has(t));
  if (outside.length > 0) {
    const extra = await deps.turns.getTurns(job.userId, outside);
    for (const t of extra.turns) turnMap.set(t.turnId, t);
  }
  const { passed, rejections } = applyQualityGates(output, {
    turns: turnMap,
    knowledge,
    knowledgeDocs: new Map(knowledgeDocs.map((d) => [d.id, d])),
  });
  // Req R-SRC: the reliability of the sites the turns read, blended into the documents' confidence.
  const domains = [...new Set([...turnMap.values()].flatMap(domainsRead))];
  const sourceReliability = new Map(
    domains.length > 0
      ? (await deps.sources.stats(domains)).map((s) => [s.domain, reliabilityOf(s).reliability] as const)
      : [],
  );
  const docs = stagedDocuments(passed, {
    batchId: job.jobId,
    stagedAt: stagedAtOf(batchAt, job),
    turns: turnMap,
    sourceReliability,
  });
  // Fact hygiene: a new fact the dedup gate found in Knowledge is that fact seen again.
  const seen = new Map(
    rejections.flatMap((r) =>
      r.gate === 'dedup' && r.existing ? [[r.existing, { at: batchAt, by: `batch ${job.jobId}` }] as const] : [],
    ),
  );
  // Verified on the index as it is now: the API may have written it since the batch read it.
  await verifySeenFacts(job.userId, seen, deps);
  // The log lists what the batch saw, not what changed: a redelivery (nothing left to change) logs the same.
  return { output, passed, rejections, docs, verified: [...seen.keys()], turns: turnMap };
}

type Recurrences = ReturnType<typeof findRecurrences>;

/** What the batch staged, the staged items it reinforced and those it promoted to Knowledge. */
export interface Staged {
  toStage: Recurrences['toStage'];
  reinforcements: Recurrences['reinforcements'];
  suppressed: Recurrences['suppressed'];
  /** Items the `deleted` gate rejected. */
  buried: number;
  stagedFiles: string[];
  promotedFiles: string[];
  reinforced: BatchLog['reinforced'];
}

/**
 * Req R-PRO-1: outputs that recur in an earlier batch's staged item promote it; the rest are
 * staged. An output repeating a discarded item is a dedup rejection (added to `gated.rejections`).
 */
export async function stageAndReinforce(
  job: Job,
  input: BatchInput,
  gated: Gated,
  deps: ReflectionDeps,
): Promise<Staged> {
  const alive = await withoutDeleted(job, gated, deps);
  const { reinforcements, toStage, suppressed } = findRecurrences(
    await deps.knowledge.listStaged(job.userId),
    alive,
    job.jobId,
  );
  for (const s of suppressed) {
    gated.rejections.push({
      category: categoryOf(s.doc.kind),
      item: s.doc.title,
      gate: 'dedup',
      reason: `repeats Knowledge_staging/${s.discarded.path}, which a reviewer discarded (similarity ${round2(s.similarity)})`,
    });
  }
  const stagedFiles = await deps.knowledge.putStaged(job.userId, toStage, job.jobId);
  const promotedFiles: string[] = [];
  const reinforced: BatchLog['reinforced'] = [];
  const taken = new Set(input.knowledgeDocs.map((d) => d.id));
  for (const r of reinforcements) {
    const record = await deps.knowledge.reinforce(job.userId, r.staged.path, job.jobId);
    reinforced.push({
      item: r.doc.title,
      staged_file: `Knowledge_staging/${r.staged.path}`,
      similarity: round2(r.similarity),
      promotion_count: record.promotedBy.length,
    });
    if (record.status === 'promoted' || record.promotedBy.length < PROMOTIONS_TO_KNOWLEDGE) continue;
    const { knowledgePath: path } = await promoteStaged(deps, job.userId, record, taken, input.batchAt);
    taken.add(path);
    promotedFiles.push(`Knowledge/${path}`);
  }
  return {
    toStage,
    reinforcements,
    suppressed,
    buried: gated.docs.length - alive.length,
    stagedFiles,
    promotedFiles,
    reinforced,
  };
}

const categoryOf = (kind: StagedDocument['kind']) =>
  kind === 'fact'
    ? 'new_facts'
    : kind === 'correction'
      ? 'corrections'
      : kind === 'connection'
        ? 'connections'
        : 'open_questions';

/**
 * Req R-DEL-2: the passed items that repeat a deleted fact (its title, or its text's words:
 * lib/forget/tombstone.ts) are rejected by the `deleted` gate and logged with the batch's other
 * rejections; the rest go on to be staged or to reinforce.
 */
async function withoutDeleted(job: Job, gated: Gated, deps: ReflectionDeps): Promise<StagedDocument[]> {
  if (!deps.erasures || gated.docs.length === 0) return gated.docs;
  const buried = await deps.erasures.buried(
    job.userId,
    gated.docs.flatMap((d) => tombstoneKeys(d)),
  );
  if (buried.size === 0) return gated.docs;
  return gated.docs.filter((d) => {
    const key = buriedKeyOf(d, buried);
    if (key)
      gated.rejections.push({
        category: categoryOf(d.kind),
        item: d.title,
        gate: 'deleted',
        reason: `repeats a fact a person deleted (tombstone ${key.slice(0, key.indexOf(':'))})`,
      });
    return key === null;
  });
}

/**
 * Req R-EPI: each reviewed turn's episode gets its document, linked to this batch and
 * to what the batch learned from that turn; so do the agent.event episodes that waited for
 * this batch (linked to what it learned from the event's turn, or from the whole batch when
 * the event named none). Returns their keys under the user's prefix.
 */
export async function linkEpisodes(
  job: Job,
  input: Pick<BatchInput, 'turns' | 'eventEpisodes'>,
  staged: Staged,
  deps: ReflectionDeps,
): Promise<string[]> {
  const episodes: string[] = [];
  const learnedFrom = (turnId: number | undefined) => [
    ...staged.toStage
      .filter((d) => turnId === undefined || d.sourceTurns.includes(turnId))
      .map((d) => `Knowledge_staging/${d.path}`),
    ...staged.reinforcements
      .filter((r) => turnId === undefined || r.doc.sourceTurns.includes(turnId))
      .map((r) => `Knowledge_staging/${r.staged.path}`),
  ];
  for (const t of input.turns) {
    if (!t.episode) continue;
    const key = await deps.knowledge.putEpisode(
      job.userId,
      t.turnId,
      episodeDocument({ ...t, episode: t.episode }, job.jobId, learnedFrom(t.turnId)),
    );
    episodes.push(key.slice(userPrefix(job.userId).length));
  }
  for (const e of input.eventEpisodes) {
    const key = await deps.knowledge.putEventEpisode(
      job.userId,
      e.episodeId,
      episodeDocument(e, job.jobId, learnedFrom(e.turnId)),
    );
    episodes.push(key.slice(userPrefix(job.userId).length));
  }
  return episodes;
}

/** Req R-LLM-2's connections join the relation graph, at the time of the batch's last turn. */
export async function connectionEdges(job: Job, batchAt: string, gated: Gated, deps: ReflectionDeps) {
  return recordRelations(
    job.userId,
    gated.passed.connections.map((c) => ({
      from: c.file_a,
      to: c.file_b,
      relation: 'related_to',
      note: c.relationship,
      confidence:
        gated.docs.find((d) => d.kind === 'connection' && d.meta.file_a === c.file_a && d.meta.file_b === c.file_b)
          ?.confidence ?? 0.6,
      provenance: { source: 'batch' as const, id: job.jobId, turns: c.source_turns, at: batchAt },
    })),
    batchAt,
    deps.graph,
  );
}

/** Oldest a staged time may be before its job was asked for: the expiry sweep looks 14 days past its cutoff. */
const MAX_STAGED_LAG_MS = 7 * 86_400_000;

/**
 * When a batch's items were staged: its last turn's time (an input time, the same on every
 * delivery), but no more than a week before the job was asked for — turns imported months
 * late would otherwise be staged on a day the expiry sweep no longer reads, or expire at once.
 */
function stagedAtOf(batchAt: string, job: Job): string {
  const floor = Date.parse(job.requestedAt) - MAX_STAGED_LAG_MS;
  return Date.parse(batchAt) < floor ? new Date(floor).toISOString() : batchAt;
}
