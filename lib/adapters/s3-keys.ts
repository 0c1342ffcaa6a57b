import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

/** Every key under a prefix, following continuation tokens (ListObjectsV2 answers at most 1,000 a page). */
export async function listAllKeys(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const res = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    keys.push(...(res.Contents ?? []).flatMap((o) => (o.Key ? [o.Key] : [])));
    token = res.IsTruncated ? res.NextContinuationToken : undefined;
  } while (token);
  return keys;
}
