/**
 * Writes that race, on the local harness (DynamoDB Local enforces conditions as DynamoDB
 * does), through the same adapters and IAM-checked clients the functions use: what Lambda's
 * concurrency would lose if a read-modify-write had no condition.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionClients } from '../../infra/local/clients.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { DynamoSourceReliabilityStore } from '../../lib/sources/dynamo-source-reliability-store.adapter.js';
import { DynamoS3KnowledgeStore } from '../../lib/knowledge/knowledge-store.adapter.js';
import { DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import type { SourceObservation } from '../../lib/sources/source-reliability.js';
import type { KnowledgeDoc } from '../../lib/knowledge/knowledge.js';
import { iamDenials } from '../helpers/iam.js';

let stack: LocalHarness;

beforeAll(async () => {
  stack = await startHarness({ stage: 'racetest', logLevel: 'SILENT' });
}, 180_000);
afterAll(async () => {
  await stack?.stop();
});

const doc = (id: string): KnowledgeDoc => ({
  id,
  title: id,
  text: `fact ${id}`,
  category: 'Facts',
  confidence: 0.7,
  sourceTurns: [1],
  summary: `fact ${id}`,
  promotedAt: '2026-01-01T00:00:00Z',
});

describe("one user's knowledge index, written by the reflector and the API at once", () => {
  it('loses no update of 2 × 15 concurrent writers, and keeps one current version', async () => {
    const { tableName, bucketName } = stack.info;
    // Two containers: the reflector's and the API's, each with its function's clients and grants.
    const reflectorClients = functionClients('reflector', stack.iam);
    const reflector = new DynamoS3KnowledgeStore({
      ddb: reflectorClients.ddb,
      s3: reflectorClients.s3,
      tableName,
      bucketName,
      changes: new DynamoSearchChangeLog({ ddb: reflectorClients.ddb, tableName }),
    });
    const apiClients = functionClients('api', stack.iam);
    const api = new DynamoS3KnowledgeStore({
      ddb: apiClients.ddb,
      s3: apiClients.s3,
      tableName,
      bucketName,
      changes: new DynamoSearchChangeLog({ ddb: apiClients.ddb, tableName }),
    });
    const user = 'race-user';
    await Promise.all([
      ...Array.from({ length: 15 }, (_, i) =>
        reflector.putKnowledge(user, [{ path: `Facts/r${i}.md`, markdown: `# r${i}`, doc: doc(`Facts/r${i}.md`) }]),
      ),
      ...Array.from({ length: 15 }, (_, i) =>
        api.putKnowledge(user, [{ path: `Facts/a${i}.md`, markdown: `# a${i}`, doc: doc(`Facts/a${i}.md`) }]),
      ),
    ]);
    const ids = (await api.loadKnowledge(user)).map((d) => d.id).sort();
    expect(ids).toHaveLength(30);
    expect(ids).toEqual(
      [
        ...Array.from({ length: 15 }, (_, i) => `Facts/a${i}.md`),
        ...Array.from({ length: 15 }, (_, i) => `Facts/r${i}.md`),
      ].sort(),
    );
    // A fresh container sees the same; the retired versions are gone, the current one stays.
    const fresh = new DynamoS3KnowledgeStore({
      ddb: apiClients.ddb,
      s3: apiClients.s3,
      tableName,
      bucketName,
      changes: new DynamoSearchChangeLog({ ddb: apiClients.ddb, tableName }),
    });
    expect((await fresh.loadKnowledge(user)).length).toBe(30);
    const dump = (await stack.dumpState()).find((d) => d.userId === user);
    const snapshots = Object.keys(dump?.objects ?? {}).filter((k) => k.includes('/index/knowledge/'));
    expect(snapshots).toHaveLength(1);
    expect(iamDenials(stack)).toEqual([]);
  });
});

describe('source reliability, counted for all users at once', () => {
  it('counts every observation of 12 users reporting one site at once exactly once, redeliveries included', async () => {
    const clock = { now: () => new Date('2026-02-01T00:00:00Z') };
    // Twelve signal containers, one per user (Lambda runs one batch per FIFO message group).
    const stores = Array.from(
      { length: 12 },
      () =>
        new DynamoSourceReliabilityStore(
          { ddb: functionClients('signal', stack.iam).ddb, tableName: stack.info.tableName },
          clock,
        ),
    );
    const observations = (user: number): SourceObservation[] =>
      Array.from({ length: 10 }, (_, i) => ({
        domain: 'hot.example',
        outcome: i % 3 === 0 ? 'blocked' : 'success',
        key: `${i + 1}#0`,
        at: `2026-02-01T00:00:${String(user).padStart(2, '0')}Z`,
        ...(i % 3 === 0 ? {} : { quality: 0.5 }),
      }));
    const added = await Promise.all([
      ...stores.map((store, u) => store.record(`site-user-${u}`, observations(u))),
      // A redelivery of user 0's batch while the first delivery runs.
      stores[0]!.record('site-user-0', observations(0)),
    ]);
    expect(added.reduce((a, b) => a + b, 0)).toBe(120);
    const [stats] = await stores[1]!.stats(['hot.example']);
    expect(stats).toMatchObject({
      domain: 'hot.example',
      attempts: 120,
      successes: 72,
      blocked: 48,
      failed: 0,
      qualityCount: 72,
      lastOutcomeAt: '2026-02-01T00:00:11Z',
    });
    expect(stats?.qualitySum).toBeCloseTo(36);
    expect(iamDenials(stack)).toEqual([]);
  });
});
