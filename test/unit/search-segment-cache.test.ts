/**
 * The segments a warm container keeps are bounded. The load bench's heap grew
 * by one SearchSegment per compaction because a segment a container wrote itself was kept
 * without ever evicting one; the store is driven here over an S3 stand-in that counts reads.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoS3SearchIndexStore } from '../../lib/search/search-index-store.adapter.js';
import { SearchSegment } from '../../lib/search/search-segment.js';

/** An S3 that keeps object bodies and counts GetObject calls. */
function s3Stub() {
  const objects = new Map<string, Uint8Array>();
  const stats = { gets: 0 };
  const client = {
    send: async (command: { constructor: { name: string }; input: { Key: string; Body?: Uint8Array } }) => {
      const { Key, Body } = command.input;
      if (command.constructor.name === 'PutObjectCommand') objects.set(Key, Uint8Array.from(Body ?? []));
      if (command.constructor.name !== 'GetObjectCommand') return {};
      stats.gets += 1;
      const bytes = objects.get(Key);
      if (!bytes) throw Object.assign(new Error(Key), { name: 'NoSuchKey' });
      return { Body: { transformToByteArray: async () => bytes } };
    },
  };
  return { client: client as unknown as S3Client, stats };
}

describe('the search index store segment cache', () => {
  it('keeps at most 48 segments, the ones it wrote included: the oldest is read from S3 again', async () => {
    const s3 = s3Stub();
    const store = new DynamoS3SearchIndexStore({
      ddb: {} as DynamoDBDocumentClient,
      s3: s3.client,
      tableName: 'table',
      bucketName: 'bucket',
    });
    const refs = [];
    for (let v = 1; v <= 49; v++) refs.push(await store.putSegment('u1', v, SearchSegment.build([])));
    await store.segment(refs[48] as (typeof refs)[number]);
    expect(s3.stats.gets).toBe(0);
    const first = await store.segment(refs[0] as (typeof refs)[number]);
    expect(first?.size).toBe(0);
    expect(s3.stats.gets).toBe(1);
  });
});
