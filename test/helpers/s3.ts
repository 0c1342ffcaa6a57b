import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { listAllKeys } from '../../lib/adapters/s3-keys.js';
import type { StackInfo } from '../../infra/local/stack.js';

/** Read access to the local stack's bucket, for assertions. */
export function bucketReader(info: StackInfo) {
  const s3 = new S3Client({ region: info.region, endpoint: info.endpoints.s3, forcePathStyle: true, credentials: info.credentials });
  return {
    list: (prefix: string) => listAllKeys(s3, info.bucketName, prefix),
    async text(key: string): Promise<string> {
      const res = await s3.send(new GetObjectCommand({ Bucket: info.bucketName, Key: key }));
      return (await res.Body?.transformToString('utf-8')) ?? '';
    },
    destroy: () => s3.destroy(),
  };
}
