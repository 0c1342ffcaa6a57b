/**
 * Least privilege, checked by the local harness itself: every AWS request a handler makes is
 * evaluated against its function's synthesized IAM policies (infra/local/iam/), and a
 * denied one fails as it would in AWS. Tests assert that nothing was denied, and that each
 * function they exercised was checked at all (so a check over no requests cannot pass).
 */
import type { LocalHarness } from '../../infra/local/harness.js';

/** Every denied request, as "function: operation — action on resource (result)". */
export function iamDenials(stack: LocalHarness): string[] {
  if (!stack.iam) throw new Error('the local harness runs without IAM enforcement');
  return stack.iam.stats.denials.map(
    (d) =>
      `${d.fn}${d.caller === 'event-source' ? ' (event source)' : ''}: ${d.operation} — ${d.action} on ${d.resource} (${d.result})`,
  );
}

/** The functions whose handlers made at least one checked request. */
export function functionsChecked(stack: LocalHarness): string[] {
  if (!stack.iam) throw new Error('the local harness runs without IAM enforcement');
  return Object.entries(stack.iam.stats.byFunction)
    .filter(([, n]) => n > 0)
    .map(([fn]) => fn)
    .sort();
}
