import { readFileSync } from 'node:fs';
import type { StackInfo } from './harness.js';

/** The running local harness's endpoints and names, or exit with a clear message if none runs. */
export function readStackInfo(path = '.local/stack.json'): StackInfo {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as StackInfo;
  } catch {
    console.error(`no running local harness: start one with \`npm start\` first (${path} is missing)`);
    process.exit(2);
  }
}
