/**
 * Vitest global setup: one DynamoDB Local for the whole run, which every local harness the
 * test files start uses (each with a database of its own: infra/local/emulators.ts) instead
 * of starting a JVM per stack. Not started when every file to run is a unit test.
 */
import type { TestProject } from 'vitest/node';
import { SHARED_DYNAMODB_VARIABLE, startSharedDynamoDbLocal } from '../../infra/local/emulators.js';

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (process.env[SHARED_DYNAMODB_VARIABLE]) return undefined;
  // The command line's file filters (`vitest run test/unit`): kept by Vitest, not in its typed API.
  const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern;
  const specs = await project.vitest.globTestSpecifications(filters);
  if (specs.every((spec) => spec.moduleId.includes('/test/unit/'))) return undefined;
  const dynamodb = await startSharedDynamoDbLocal();
  // The test files' processes, and the replays they start in child processes, inherit it.
  process.env[SHARED_DYNAMODB_VARIABLE] = dynamodb.endpoint;
  return async () => {
    delete process.env[SHARED_DYNAMODB_VARIABLE];
    await dynamodb.stop();
  };
}
