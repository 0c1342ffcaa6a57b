/**
 * EventBridge schedule expressions evaluated locally, so a simulated clock fires the same
 * sweeps production would. `cron(m h dom mon dow year)` → the 5-field form cron-parser reads.
 */
import { CronExpressionParser } from 'cron-parser';

export function toStandardCron(expression: string): string {
  const m = /^cron\((.+)\)$/.exec(expression.trim());
  if (!m?.[1]) throw new Error(`not an EventBridge cron expression: ${expression}`);
  const fields = m[1].trim().split(/\s+/);
  if (fields.length !== 6) throw new Error(`EventBridge cron needs 6 fields: ${expression}`);
  return fields
    .slice(0, 5)
    .map((f) => (f === '?' ? '*' : f))
    .join(' ');
}

/** Every fire time in (after, until], in order. */
export function fireTimesBetween(expression: string, after: Date, until: Date): Date[] {
  const it = CronExpressionParser.parse(toStandardCron(expression), { currentDate: after, endDate: until, tz: 'UTC' });
  const out: Date[] = [];
  while (it.hasNext()) {
    const next = it.next().toDate();
    if (next.getTime() > until.getTime()) break;
    out.push(next);
  }
  return out;
}
