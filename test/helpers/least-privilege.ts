/**
 * Least privilege, checked from the other side: every AWS request a handler made in a test
 * (recorded by the request ledger per function) must be covered by that function's grants
 * in infra/permissions.ts — the table the CDK app grants from.
 */
import { covers, type FunctionKey, PERMISSIONS } from '../../infra/permissions.js';
import type { StackInfo } from '../../infra/local/stack.js';
import type { QueueKey } from '../../infra/resources.js';
import { requestLedger } from '../../lib/adapters/request-ledger.js';

/** Call before the local stack starts. */
export const recordRequestTargets = (): void => requestLedger.recordTargets(true);

/** The requests (function, operation, key or queue) no grant of their function covers. */
export function requestsOutsideGrants(info: StackInfo): string[] {
  const queueOf = (url: string | undefined) => (Object.entries(info.queues).find(([, q]) => q.url === url)?.[0] as QueueKey | undefined) ?? undefined;
  const outside: string[] = [];
  for (const [fn, targets] of Object.entries(requestLedger.targetsByScope())) {
    const permissions = PERMISSIONS[fn as FunctionKey];
    for (const t of targets) {
      const queue = queueOf(t.queueUrl);
      if (!permissions || !covers(permissions, t.operation, { ...(t.key !== undefined ? { key: t.key } : {}), ...(queue ? { queue } : {}) })) {
        outside.push(`${fn}: ${t.operation} ${t.key ?? queue ?? t.queueUrl ?? ''}`.trim());
      }
    }
  }
  return outside.sort();
}

/** Functions that made at least one recorded request (so a check over none cannot pass silently). */
export const functionsSeen = (): string[] => Object.keys(requestLedger.targetsByScope()).sort();
