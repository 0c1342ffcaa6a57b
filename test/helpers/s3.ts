import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { StackInfo } from '../../infra/local/stack.js';

/** Read access to the local stack's bucket, for assertions. */
export function bucketReader(info: StackInfo) {
  const s3 = new S3Client({ region: info.region, endpoint: info.endpoints.s3, forcePathStyle: true, credentials: info.credentials });
  return {
    async list(prefix: string): Promise<string[]> {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const res = await s3.send(new ListObjectsV2Command({ Bucket: info.bucketName, Prefix: prefix, ContinuationToken: token }));
        keys.push(...(res.Contents ?? []).map((o) => o.Key ?? ''));
        token = res.IsTruncated ? res.NextContinuationToken : undefined;
      } while (token);
      return keys;
    },
    async text(key: string): Promise<string> {
      const res = await s3.send(new GetObjectCommand({ Bucket: info.bucketName, Key: key }));
      return (await res.Body?.transformToString('utf-8')) ?? '';
    },
    destroy: () => s3.destroy(),
  };
}
