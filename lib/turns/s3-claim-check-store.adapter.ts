import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { claimsRoot } from '../kernel/memory-paths.js';
import type { ClaimCheckStore } from './turn.port.js';
import { getText } from '../kernel/s3-objects.adapter.js';
import type { StorageBucket } from '../kernel/storage.adapter.js';

/** Large events parked in the memory bucket under `claims/{userId}/`. */
export class S3ClaimCheckStore implements ClaimCheckStore {
  private readonly s3: S3Client;
  private readonly bucketName: string;

  constructor(storage: StorageBucket) {
    this.s3 = storage.s3;
    this.bucketName = storage.bucketName;
  }

  async fetch(key: string): Promise<string> {
    if (!key.startsWith(claimsRoot)) {
      const error = new Error(`claim keys live under claims/: ${key}`);
      error.name = 'NoSuchKey';
      throw error;
    }
    return getText(this.s3, this.bucketName, key);
  }

  async put(key: string, body: string): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({ Bucket: this.bucketName, Key: key, Body: body, ContentType: 'application/json' }),
    );
  }
}
