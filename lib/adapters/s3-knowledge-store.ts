import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ExistingKnowledge } from '../domain/batch-assembly.js';
import { knowledgePrefix, modelOutputKey, stagingPrefix } from '../domain/memory-paths.js';
import type { StagedDocument } from '../domain/staging.js';
import type { KnowledgeStore, ModelResponse } from '../ports.js';

export class S3KnowledgeStore implements KnowledgeStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucketName: string,
  ) {}

  async listKnowledge(userId: string): Promise<ExistingKnowledge[]> {
    const prefix = knowledgePrefix(userId);
    const out: ExistingKnowledge[] = [];
    let token: string | undefined;
    do {
      const res = await this.s3.send(new ListObjectsV2Command({ Bucket: this.bucketName, Prefix: prefix, ContinuationToken: token }));
      for (const o of res.Contents ?? []) {
        if (!o.Key?.endsWith('.md')) continue;
        const path = o.Key.slice(prefix.length);
        out.push({ path, summary: (path.split('/').pop() ?? path).replace(/\.md$/, '').replace(/_/g, ' ') });
      }
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  async putStaged(userId: string, docs: readonly StagedDocument[]): Promise<string[]> {
    const prefix = stagingPrefix(userId);
    await Promise.all(
      docs.map((d) =>
        this.s3.send(new PutObjectCommand({ Bucket: this.bucketName, Key: `${prefix}${d.path}`, Body: d.markdown, ContentType: 'text/markdown; charset=utf-8' })),
      ),
    );
    return docs.map((d) => `Knowledge_staging/${d.path}`);
  }

  async getModelOutput(userId: string, batchId: string): Promise<ModelResponse | null> {
    try {
      const res = await this.s3.send(new GetObjectCommand({ Bucket: this.bucketName, Key: modelOutputKey(userId, batchId) }));
      return JSON.parse((await res.Body?.transformToString('utf-8')) ?? 'null') as ModelResponse | null;
    } catch (error) {
      if ((error as Error).name === 'NoSuchKey') return null;
      throw error;
    }
  }

  async putModelOutput(userId: string, batchId: string, response: ModelResponse): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({ Bucket: this.bucketName, Key: modelOutputKey(userId, batchId), Body: JSON.stringify(response), ContentType: 'application/json' }),
    );
  }
}
