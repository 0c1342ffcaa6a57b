/**
 * Req R-TIER-11, R-EVT-2: a batch's staged items enter the user's short-term tier (with why and
 * their source turns, once however often the job is delivered), and an event's reflection reads
 * that tier — through the signal's use case and the reflector's dispatcher, on the in-memory stores.
 */
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../events/agent-event.js';
import { assembleBatch, buildReflectorPrompt } from '../../lib/batches/batch-assembly.js';
import { occasionContext } from '../../lib/batches/event-reflection.js';
import { MemoryBatchLogStore } from '../../lib/batches/batch-log.fake.js';
import { type JobDeps, runJob } from '../../lib/jobs/run-job.js';
import { ScriptedModel } from '../../lib/model/language-model.fake.js';
import { reflectOffline } from '../../lib/offline-model/rule-reflector.js';
import { MemoryErasureLog } from '../../lib/forget/forget.fake.js';
import type { AuditEntry } from '../../lib/tiers/memory-tiers.js';
import { tierEntries } from '../../lib/tiers/tier-entries.js';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import { turn } from '../../lib/turns/turn.fake.js';
import { ingestDeps, reflectionDeps } from '../helpers/use-case-deps.js';

const QUERIES = [
  'My sister Ana lives in Lisbon and works as a nurse at the children hospital.',
  'I adopted a grey cat named Pixel last spring; she sleeps on my keyboard.',
  'For work I maintain the billing service written in Rust.',
  'Ana is visiting me in June, we plan to hike the Rota Vicentina trail.',
  'Pixel needs a vet appointment for her vaccines next week.',
];

function setup() {
  const ingest = ingestDeps();
  const model = new ScriptedModel((req) => reflectOffline(req.prompt));
  const audit: AuditEntry[] = [];
  const trail = {
    append: async (e: readonly AuditEntry[]) => void audit.push(...e),
    appendOnce: async (e: AuditEntry) =>
      void (audit.some((a) => a.at === e.at && a.itemId === e.itemId && a.action === e.action) || audit.push(e)),
    list: async () => [],
    dropWords: async () => 0,
  };
  const reflection = {
    ...reflectionDeps(ingest, model),
    tiers: tierEntries({ clock: ingest.clock, items: ingest.items, audit: trail, turns: ingest.turns }),
  };
  const deps = (r = reflection) =>
    ({
      reflection: r,
      forgets: { latest: async () => null },
      erasures: new MemoryErasureLog(),
      log: r.log,
    }) as unknown as JobDeps;
  let n = 0;
  const publish = (...messages: object[]) =>
    ingestTurns(
      messages.map((m) => ({ messageId: `m${++n}`, body: JSON.stringify(m) })),
      ingest,
    );
  const run = async (r = reflection) => {
    const jobs = ingest.jobs.jobs.splice(0);
    for (const job of jobs) await runJob(job, deps(r), { retryUnusableOutput: false, remainingMs: () => 60_000 });
    return jobs;
  };
  const turns = Array.from({ length: 10 }, (_, i) =>
    turn({
      userId: 'alice',
      sessionId: `s-${1 + Math.floor(i / 5)}`,
      turnId: i + 1,
      query: QUERIES[i % QUERIES.length] ?? '',
      response: 'Noted.',
    }),
  );
  return { ingest, model, reflection, audit, trail, publish, run, turns };
}

describe('reflection feeds the short-term tier (req R-TIER-11)', () => {
  it('writes each staged item as a short-term entry with its reason and source turns, once per job', async () => {
    const p = setup();
    await p.publish(...p.turns);
    const [job] = await p.run();
    expect(job?.kind).toBe('batch');
    const log = p.reflection.batchLogs.logs.get(`alice/${job?.jobId}`);
    expect(log?.staged_files.length).toBeGreaterThan(0);
    const entries = (await p.ingest.items.list('alice')).filter((i) => i.tier === 'short_term');
    expect(entries).toHaveLength(log?.staged_files.length ?? -1);
    expect(log?.tier_entries?.sort()).toEqual(entries.map((e) => e.id).sort());
    for (const e of entries) {
      expect(e).toMatchObject({
        kind: 'memory',
        status: 'short_term',
        reason: expect.stringMatching(new RegExp(`staged by batch ${job?.jobId}$`)),
      });
      expect(e.sourceTurns.length).toBeGreaterThan(0);
      expect(e.sessionId).toMatch(/^s-[12]$/);
    }
    expect(p.audit.filter((a) => a.action === 'create')).toEqual(
      entries.map(() =>
        expect.objectContaining({
          actor: 'reflector',
          to: 'short_term',
          reason: expect.stringContaining('staged by batch'),
        }),
      ),
    );
    // Delivered again after a crash before its batch log: the same entries, none new, none corroborated.
    p.ingest.jobs.jobs.push(job as NonNullable<typeof job>);
    await p.run({ ...p.reflection, batchLogs: new MemoryBatchLogStore() });
    expect((await p.ingest.items.list('alice')).map((i) => i.id).sort()).toEqual(entries.map((e) => e.id).sort());
    expect(p.audit.filter((a) => a.action !== 'create')).toEqual([]);
  });

  it('records each create once when the first attempt died between an entry and its audit entry', async () => {
    const p = setup();
    let failures = 0;
    const flakyTrail = {
      ...p.trail,
      append: async (e: readonly AuditEntry[]) => {
        if (failures++ === 0) throw new Error('connection reset after the entry was written');
        await p.trail.append(e);
      },
    };
    const flaky = {
      ...p.reflection,
      tiers: tierEntries({ clock: p.ingest.clock, items: p.ingest.items, audit: flakyTrail, turns: p.ingest.turns }),
    };
    await p.publish(...p.turns);
    const [job] = p.ingest.jobs.jobs;
    await expect(p.run(flaky)).rejects.toThrow(/connection reset/);
    p.ingest.jobs.jobs.push(job as NonNullable<typeof job>);
    await p.run();
    const ids = (await p.ingest.items.list('alice')).filter((i) => i.tier === 'short_term').map((i) => i.id);
    expect(ids.length).toBeGreaterThan(1);
    const creates = p.audit.filter((a) => a.action === 'create').map((a) => a.itemId);
    expect(creates.sort()).toEqual(ids.sort());
  });
});

describe('an event reflection reads short-term memory and the plans outcomes (req R-EVT-2)', () => {
  it('shows the short-term entries in the prompt of an event reflection', async () => {
    const p = setup();
    await p.publish(...p.turns);
    await p.run();
    const [entry] = (await p.ingest.items.list('alice')).filter((i) => i.tier === 'short_term');
    expect(entry).toBeDefined();
    const event: AgentEvent = {
      type: 'agent.event',
      version: 1,
      userId: 'alice',
      timestamp: '2026-02-06T14:10:00Z',
      trigger: 'error',
      detail: 'The vet booking tool timed out.',
    };
    await p.publish(event);
    await p.run();
    const prompt = p.model.requests.at(-1)?.prompt ?? '';
    expect(prompt).toContain('## Short-term memory\n- ');
    expect(prompt).toContain(`- ${entry?.title}`);
  });

  it('says what the plans led to when turns, not the event, are reviewed; nothing when there is nothing', () => {
    const context = occasionContext(
      [{ title: 'cat named Pixel', confidence: 0.75, seen: { sessions: ['s-1', 's-2'] } }],
      'Episode goal: book the vet\nOutcome: failed',
    );
    expect(context).toBe(
      "## Short-term memory\n- cat named Pixel (confidence 0.75, seen in 2 sessions)\n\n## What the agent's plans led to\nEpisode goal: book the vet\nOutcome: failed",
    );
    expect(occasionContext([], '')).toBe('');
    const prompt = buildReflectorPrompt(
      assembleBatch([turn({ turnId: 1 })]),
      [],
      { trigger: 'error' },
      [],
      '',
      context,
    );
    expect(prompt.indexOf('## Short-term memory')).toBeGreaterThan(prompt.indexOf('## Earlier diary entries'));
    expect(prompt.indexOf('## Short-term memory')).toBeLessThan(prompt.indexOf('## Turns to review'));
    expect(buildReflectorPrompt(assembleBatch([turn({ turnId: 1 })]), [])).not.toContain('Short-term memory');
  });
});
