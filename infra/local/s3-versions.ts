/**
 * The local S3 emulator (fauxqs) keeps no versions and has no ListObjectVersions. The deployed
 * bucket is versioned, and a forget lists and deletes every version under a user's prefixes
 * (lib/adapters/user-eraser.ts). Locally the emulator answers as an unversioned bucket would:
 * each object is its only version, with the version id "null" (what S3 calls an object written
 * while versioning was off: https://docs.aws.amazon.com/AmazonS3/latest/userguide/AddingObjectstoVersionSuspendedBuckets.html),
 * and no delete markers. A local-stack shim only: it runs after the IAM check and the ledger
 * have seen the request as ListObjectVersions, and the production client carries none of it.
 */
import { ListObjectsV2Command, type ListObjectVersionsCommandOutput, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from '../../lib/adapters/aws-clients.js';

type Client = { middlewareStack: { add: (...args: never[]) => void } };

export function versionsAsUnversioned<C extends Client>(client: C): C {
  let plain: S3Client | undefined;
  const add = client.middlewareStack.add as unknown as (mw: unknown, options: { step: string; name: string; priority: string }) => void;
  add(
    (next: (args: { input: Record<string, unknown> }) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: { input: Record<string, unknown> }) => {
        if (context.commandName !== 'ListObjectVersionsCommand') return next(args);
        plain ??= createS3Client();
        const { Bucket, Prefix, KeyMarker } = args.input as { Bucket: string; Prefix?: string; KeyMarker?: string };
        const res = await plain.send(new ListObjectsV2Command({ Bucket, Prefix, StartAfter: KeyMarker }));
        const versions = (res.Contents ?? []).map((o) => ({ Key: o.Key, VersionId: 'null', IsLatest: true, LastModified: o.LastModified, Size: o.Size, ETag: o.ETag }));
        const last = versions.at(-1)?.Key;
        const output: ListObjectVersionsCommandOutput = {
          $metadata: res.$metadata,
          Versions: versions,
          DeleteMarkers: [],
          IsTruncated: res.IsTruncated === true,
          ...(res.IsTruncated && last !== undefined ? { NextKeyMarker: last, NextVersionIdMarker: 'null' } : {}),
        };
        return { output };
      },
    { step: 'initialize', name: 'localUnversionedBucket', priority: 'low' },
  );
  return client;
}

