import type { StackProps } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { StageConfig } from '../config/stages.js';
import type { MemoryQueue } from '../constructs/memory-queues.js';
import type { FunctionKey, Permissions } from '../permissions.js';
import type { QueueKey } from '../resources.js';
import type { MemoryUserPool } from './stateful-stack.js';

/** What the stateless stack is built from: the stage, its settings and the stateful stack's resources. */
export interface StatelessStackProps extends StackProps {
  stage: string;
  config: StageConfig;
  table: Table;
  bucket: Bucket;
  queues: Record<QueueKey, MemoryQueue>;
  /** The key of the table, bucket and queues (the stateful stack's `dataKey`). */
  dataKey: IKey;
  /** The Cognito pool the memory API trusts; required when `config.auth.issuer` is not set. */
  users?: MemoryUserPool;
  /** The stage's alarm topic (the stateful stack's `alarmTopic`): every alarm here notifies it. */
  alarmTopic: ITopic;
  /** What each function may do. @default PERMISSIONS (infra/permissions.ts); tests grant less to show a denial. */
  permissions?: Record<FunctionKey, Permissions>;
  /** Each function's recursive loop setting. @default RECURSIVE_LOOPS; tests leave it out to show what Lambda does then. */
  recursiveLoops?: RecursiveLoops;
}

/** A function's RecursiveLoop setting (AWS::Lambda::Function RecursiveLoop); one left out is Lambda's default, Terminate. */
export type RecursiveLoops = Partial<Record<FunctionKey, 'Allow' | 'Terminate'>>;
