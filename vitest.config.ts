import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    // Two test files at once: vitest's default is one fewer than the CPUs (one, on the 2-core
    // CI machine), and the integration tests mostly wait on emulators and timers. Measured on
    // 2 cores: 402 s for the suite against 605 s one file at a time, green both ways.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // expect.poll waits for a browser or an emulator to catch up; its 1 s default is a wall-clock
    // assertion that a loaded CI machine fails (a console search took longer than 1 s there).
    expect: { poll: { timeout: 20_000, interval: 100 } },
    // One DynamoDB Local for the run, shared by the stacks of every file (a JVM start each was ~10 s of CPU).
    globalSetup: ['./test/helpers/shared-dynamodb.ts'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', CDK_DISABLE_CLI_TELEMETRY: 'true' },
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        // Unit tests share a process's module cache: they hold no module state between files, and
        // importing the SDK and zod once per worker instead of once per file halves the tier's time
        // (on 2 loaded cores: 119 s → 67 s).
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false },
      },
      { extends: true, test: { name: 'system', include: ['test/**/*.test.ts'], exclude: ['test/unit/**'] } },
    ],
  },
});
