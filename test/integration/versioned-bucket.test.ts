/**
 * The local bucket keeps versions as a versioning-enabled S3 bucket does (infra/local/versioned-s3.ts):
 * overwrites and deletes leave versions, delete markers hide a key, a version id reads or
 * deletes that version, and deleting the current version brings the previous one back.
 */
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { startFauxqs } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../infra/local/emulators.js';
import { startVersionedS3, type VersionedS3 } from '../../infra/local/versioned-s3.js';

let fauxqs: Awaited<ReturnType<typeof startFauxqs>>;
let front: VersionedS3;
let s3: S3Client;
const Bucket = 'versioned-test';
const text = async (p: Promise<{ Body?: { transformToString(): Promise<string> } }>) =>
  (await p).Body?.transformToString();
const put = (Key: string, Body: string) =>
  s3.send(new PutObjectCommand({ Bucket, Key, Body, ContentType: 'text/markdown' }));
const versions = async (Prefix: string) => {
  const res = await s3.send(new ListObjectVersionsCommand({ Bucket, Prefix }));
  return {
    versions: (res.Versions ?? []).map((v) => ({ key: v.Key, id: v.VersionId, latest: v.IsLatest, size: v.Size })),
    markers: (res.DeleteMarkers ?? []).map((v) => ({ key: v.Key, id: v.VersionId, latest: v.IsLatest })),
  };
};

beforeAll(async () => {
  fauxqs = await startFauxqs({ port: 0, logger: false, host: 'localhost' });
  front = await startVersionedS3(`http://127.0.0.1:${fauxqs.port}`);
  s3 = new S3Client({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint: front.url,
    forcePathStyle: true,
  });
  await s3.send(new CreateBucketCommand({ Bucket }));
  await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
});
afterAll(async () => {
  s3?.destroy();
  await front?.close();
  await fauxqs?.stop();
});

describe('the local versioned bucket', () => {
  it('keeps an overwritten object as a noncurrent version, readable by its id', async () => {
    const first = await put('a/doc.md', 'one');
    const second = await put('a/doc.md', 'two!');
    expect(first.VersionId).toBeTruthy();
    expect(second.VersionId).not.toBe(first.VersionId);
    expect(await text(s3.send(new GetObjectCommand({ Bucket, Key: 'a/doc.md' })))).toBe('two!');
    const old = await s3.send(new GetObjectCommand({ Bucket, Key: 'a/doc.md', VersionId: first.VersionId }));
    expect(await old.Body?.transformToString()).toBe('one');
    expect(old.ContentType).toBe('text/markdown');
    expect(await versions('a/')).toEqual({
      versions: [
        { key: 'a/doc.md', id: second.VersionId, latest: true, size: 4 },
        { key: 'a/doc.md', id: first.VersionId, latest: false, size: 3 },
      ],
      markers: [],
    });
  });

  it('hides a deleted key behind a delete marker (404), and deleting the marker brings the object back', async () => {
    await put('b/doc.md', 'kept');
    const del = await s3.send(new DeleteObjectCommand({ Bucket, Key: 'b/doc.md' }));
    expect(del.DeleteMarker).toBe(true);
    await expect(s3.send(new GetObjectCommand({ Bucket, Key: 'b/doc.md' }))).rejects.toMatchObject({
      name: 'NoSuchKey',
      $metadata: { httpStatusCode: 404 },
    });
    expect((await s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'b/' }))).Contents ?? []).toEqual([]);
    await expect(
      s3.send(new GetObjectCommand({ Bucket, Key: 'b/doc.md', VersionId: del.VersionId })),
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 405 } });
    const listed = await versions('b/');
    expect(listed.markers).toEqual([{ key: 'b/doc.md', id: del.VersionId, latest: true }]);
    expect(listed.versions).toHaveLength(1);
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'b/doc.md', VersionId: del.VersionId }));
    expect(await text(s3.send(new GetObjectCommand({ Bucket, Key: 'b/doc.md' })))).toBe('kept');
  });

  it('deletes versions for good by id, one at a time or in a DeleteObjects request', async () => {
    const v1 = await put('c/x.md', 'x1');
    const v2 = await put('c/x.md', 'x2');
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'c/x.md', VersionId: v2.VersionId }));
    expect(await text(s3.send(new GetObjectCommand({ Bucket, Key: 'c/x.md' })))).toBe('x1');
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'c/y.md' }));
    const all = await versions('c/');
    const objects = [...all.versions, ...all.markers].map((v) => ({ Key: v.key, VersionId: v.id }));
    expect(objects).toHaveLength(2);
    const res = await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: objects, Quiet: false } }));
    expect((res.Deleted ?? []).map((d) => d.VersionId).sort()).toEqual(objects.map((o) => o.VersionId).sort());
    expect(await versions('c/')).toEqual({ versions: [], markers: [] });
    await expect(
      s3.send(new GetObjectCommand({ Bucket, Key: 'c/x.md', VersionId: v1.VersionId })),
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
  });

  it('pages a listing by key and version id markers', async () => {
    for (let i = 0; i < 3; i++) await put('d/k.md', `v${i}`);
    await put('d/l.md', 'l');
    const seen: string[] = [];
    let KeyMarker: string | undefined;
    let VersionIdMarker: string | undefined;
    do {
      const res = await s3.send(
        new ListObjectVersionsCommand({ Bucket, Prefix: 'd/', MaxKeys: 2, KeyMarker, VersionIdMarker }),
      );
      seen.push(...(res.Versions ?? []).map((v) => `${v.Key}@${v.IsLatest}`));
      KeyMarker = res.IsTruncated ? res.NextKeyMarker : undefined;
      VersionIdMarker = res.IsTruncated ? res.NextVersionIdMarker : undefined;
    } while (KeyMarker);
    expect(seen).toEqual(['d/k.md@true', 'd/k.md@false', 'd/k.md@false', 'd/l.md@true']);
  });
});
