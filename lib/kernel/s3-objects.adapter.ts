import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

/**
 * Reading the memory bucket: the one place that turns a GetObject into text and tells a
 * missing object from a failed read. Every adapter reads through these.
 */

/** S3's answer for a key with no object: `NoSuchKey` to a GET, `NotFound` to a HEAD. */
export const isMissingObject = (error: unknown): boolean => {
  const name = (error as Error | undefined)?.name;
  return name === 'NoSuchKey' || name === 'NotFound';
};

/** The object's text (UTF-8). A missing object throws S3's own error (`NoSuchKey`), as does any other failure. */
export async function getText(s3: S3Client, bucket: string, key: string): Promise<string> {
  const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await res.Body?.transformToString('utf-8')) ?? '';
}

/** The object's text, or null when there is no object at the key; throttling, 5xx and access errors still throw. */
export async function getTextOrNull(s3: S3Client, bucket: string, key: string): Promise<string | null> {
  try {
    return await getText(s3, bucket, key);
  } catch (error) {
    if (isMissingObject(error)) return null;
    throw error;
  }
}

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
