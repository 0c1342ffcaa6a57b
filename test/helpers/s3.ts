import { S3Client } from '@aws-sdk/client-s3';
import { getText, listAllKeys } from '../../lib/adapters/s3-objects.js';
import type { StackInfo } from '../../infra/local/stack.js';

/** Read access to the local stack's bucket, for assertions. */
export function bucketReader(info: StackInfo) {
  const s3 = new S3Client({ region: info.region, endpoint: info.endpoints.s3, forcePathStyle: true, credentials: info.credentials });
  return {
    list: (prefix: string) => listAllKeys(s3, info.bucketName, prefix),
    text: (key: string): Promise<string> => getText(s3, info.bucketName, key),
    destroy: () => s3.destroy(),
  };
}
