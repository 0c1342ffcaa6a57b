/**
 * Daily model cost totals: a user's (GET /v1/users/{u}/costs) and the
 * stage's (GET /v1/costs, administrators), from the cost ledger the reflector writes.
 */
import { dailyTotals, lastDays } from './daily-cost.js';
import type { Clock } from '../kernel/runtime.port.js';
import type { CostLedger } from './cost-ledger.port.js';

type Deps = { costs: CostLedger; clock: Clock };

/** The user's last `days` UTC days, today's included: one range query of their partition. */
export async function userCosts(deps: Deps, userId: string, days: number) {
  const wanted = lastDays(deps.clock.now(), days);
  const entries = await deps.costs.forUser(userId, wanted[0] as string, wanted.at(-1) as string);
  return { days: dailyTotals(entries, wanted) };
}

/** Every user's cost of the last `days` UTC days, with how many users had one: each day's shards. */
export async function stageCosts(deps: Deps, days: number) {
  const wanted = lastDays(deps.clock.now(), days);
  const entries = (await Promise.all(wanted.map((day) => deps.costs.forDay(day)))).flat();
  return { days: dailyTotals(entries, wanted, { countUsers: true }) };
}
