/**
 * What a smoke run needs to know about the stack it tests. `npm run smoke -- --stage NAME`
 * builds it from the stage's CloudFormation outputs and its Cognito pool (cloud-target.ts);
 * the integration test and `--local` build it from the local harness (local-target.ts). The
 * checks (smoke.ts) see only this, so local and cloud run the same code path.
 */
import type { BedrockClient } from '@aws-sdk/client-bedrock';
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { QueueKey } from '../resources.js';

export interface SmokeCheck {
  /** Stable key in the JSON line: `published`, `turnsIndexed`, `turnDlqEmpty`, … */
  id: string;
  title: string;
  ok: boolean;
  detail: string;
  /** Why it failed, as far as the run can tell. */
  cause?: string;
  /** What to look at next: a log group, a queue, a setting. */
  lookAt?: string;
}

/** A model the stage invokes, for the pre-flight (preflight.ts). */
export interface StageModel {
  /** The id the functions invoke: a foundation model id or an inference profile id. */
  modelId: string;
  /** The jobs that use it: `batches`, `summaries`, `sleepTime`, `embeddings`. */
  jobs: string[];
  /** How it is called: Converse, or InvokeModel for the embedding model. */
  api: 'converse' | 'embedding';
}

/** What the pre-flight needs: the stage's models, the Region, and clients with the caller's credentials. */
export interface ModelAccess {
  region: string;
  models: StageModel[];
  runtime: BedrockRuntimeClient;
  /** Bedrock's control plane, for GetFoundationModel. */
  control: BedrockClient;
}

export interface SmokeQueue {
  name: string;
  url: string;
  dlqName: string;
  dlqUrl: string;
}

/** The functions whose work a check looks for: where to read their logs when it failed. */
export type SmokeFunction = 'signal' | 'reflector' | 'idle' | 'api';

export interface SmokeToken {
  token: string;
  /** How it was obtained, for the report (never the token itself). */
  detail: string;
}

export interface SmokeAuth {
  /** A bearer token that may act on `userId`. */
  token(userId: string): Promise<SmokeToken>;
  /** Undo what `token` created (always called); says what it removed, or null when nothing. */
  cleanup(): Promise<string | null>;
  /**
   * The user id the token is bound to when the caller cannot choose one (a token given on
   * the command line acts on its own user); undefined when any fresh id will do.
   */
  fixedUserId?: string;
}

export interface SmokeTarget {
  /** For the report: `stage dev (eu-west-1)`, `local harness`. */
  label: string;
  sqs: SQSClient;
  s3: S3Client;
  bucketName: string;
  /** The memory API's base URL (stack output `ApiUrl`). */
  apiUrl: string;
  queues: Record<QueueKey, SmokeQueue>;
  auth: SmokeAuth;
  /** Where each function logs: CloudWatch log group names in AWS. */
  logs: Record<SmokeFunction, string>;
  /** The stage's models and the clients to check them with, before anything is published (preflight.ts). */
  models: ModelAccess;
}

/** Which function consumes each queue, so a parked message points at the right logs. */
export const CONSUMER: Record<QueueKey, SmokeFunction> = { turn: 'signal', job: 'reflector', idle: 'idle' };
