/** A sweep's model requests as one batch inference job (lib/batch-inference/batch-inference.ts), and its answers. */
import type { BatchEntry, BatchJobStatus, BatchManifest, BatchResult, DeferredReflection } from './batch-inference.js';

export interface BatchInference {
  /**
   * Writes the records' input file and the manifest under the job's prefix (batchPrefix) and
   * starts the job named `manifest.jobName`; its ARN. Idempotent: a second call with the same
   * name starts no second job.
   */
  start(manifest: BatchManifest, entries: readonly BatchEntry[]): Promise<string>;
  /** The manifest the job named `jobName` was started with; null when there is none. */
  manifest(jobName: string): Promise<BatchManifest | null>;
  /** The job's output records, answers and errors; none when it wrote no output. */
  results(manifest: BatchManifest): Promise<BatchResult[]>;
  /** Jobs started and whose end is not processed yet (markEnded), with their ARNs. */
  unfinished(): Promise<Array<{ jobName: string; jobArn: string }>>;
  /** The job's state now (GetModelInvocationJob). */
  status(jobArn: string): Promise<BatchJobStatus>;
  /** The job's end is processed: it is not among the unfinished any more. */
  markEnded(jobName: string): Promise<void>;
}

/** Routine reflections kept for the nightly batch inference job (lib/batch-inference/routine-batch.ts). */
export interface DeferredReflections {
  /** Keeps the reflection under its user and job: the same reflection kept twice is one. */
  put(reflection: DeferredReflection): Promise<void>;
  /** Every reflection kept (one user's, with `userId`), each with the key that removes it. */
  list(userId?: string): Promise<Array<DeferredReflection & { key: string }>>;
  remove(keys: readonly string[]): Promise<void>;
}
