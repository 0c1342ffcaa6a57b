/**
 * The signal-state item's size after 10,000 turns of one user, by DynamoDB's item-size rules
 * (lib/kernel/dynamo-item-size.adapter.ts), in four streams: a healthy one (every batch completes),
 * the reflector down throughout, and queries carrying 2,000- and 50,000-character tokens.
 * Pure computation, no AWS: `npx tsx bench/signal-state-size.ts` prints a markdown table
 * (docs/data-model.md quotes it).
 */
import { itemSize, writeUnits } from '../lib/kernel/dynamo-item-size.adapter.js';
import { signalStateItem } from '../lib/signals/dynamo-signal-state-store.adapter.js';
import { accumulate, completeBatch } from '../lib/signals/signal-accumulator.js';
import { initialSignalState, withAppliedMessages } from '../lib/signals/signal-state.js';
import { defaultSignalConfig } from '../lib/signals/signal-weights.js';

const TURNS = 10_000;
const START = Date.parse('2026-01-01T00:00:00Z');
const WORDS =
  'reef tank coral lighting salinity clownfish filter skimmer heater algae anemone tang sump refugium nitrate phosphate water change copepod rock sand'.split(
    ' ',
  );

/** A seeded generator, so every run prints the same table. */
function generator(seed: number) {
  let s = seed;
  const next = () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
  const word = () => WORDS[Math.floor(next() * WORDS.length)] ?? 'reef';
  return {
    sentence: () =>
      `${next() < 0.1 ? 'Actually' : 'So'} I wonder about the ${word()} and ${word()} in my ${word()} ${word()}`,
    token: (n: number) =>
      Array.from({ length: n }, () => 'abcdefghijklmnopqrstuvwxyz'[Math.floor(next() * 26)]).join(''),
  };
}

export interface StateSizeRow {
  stream: string;
  finalBytes: number;
  maxBytes: number;
  /** Write units of one state write, averaged over the run's writes (one per 10-turn Lambda batch). */
  writeUnitsPerWrite: number;
  /** Activity markers written (one per user per active day). */
  markers: number;
}

function run(stream: string, reflector: 'up' | 'down', query: () => string): StateSizeRow {
  let state = initialSignalState();
  let maxBytes = 0;
  let units = 0;
  let writes = 0;
  let markers = 0;
  for (let first = 1; first <= TURNS; first += 10) {
    const turns = Array.from({ length: 10 }, (_, k) => ({
      turnId: first + k,
      timestamp: new Date(START + (first + k) * 345_600).toISOString(),
      query: query(),
    }));
    const now = new Date(START + (first + 9) * 345_600 + 1000);
    const r = accumulate(state, turns, defaultSignalConfig, now, () => false);
    markers += r.newActiveDays.length;
    state = withAppliedMessages(
      r.state,
      turns.map((t) => `message-${t.turnId}`),
    );
    const item = signalStateItem('user-42', state, ++writes, now.toISOString());
    maxBytes = Math.max(maxBytes, itemSize(item));
    units += writeUnits(item);
    if (reflector === 'up')
      for (const t of r.triggers)
        if (t.kind === 'batch' || t.kind === 'event') state = completeBatch(state, t.jobId, t.turnIds, now) ?? state;
  }
  const finalBytes = itemSize(signalStateItem('user-42', state, writes, new Date(START).toISOString()));
  return { stream, finalBytes, maxBytes, writeUnitsPerWrite: Math.round((units / writes) * 100) / 100, markers };
}

export function signalStateSizes(): StateSizeRow[] {
  const g = generator(7);
  const tokens = (n: number) => () => {
    const t = g.token(n);
    return `${t} ${t} please keep this`;
  };
  return [
    run('healthy (batches complete)', 'up', g.sentence),
    run('reflector down throughout', 'down', g.sentence),
    run('2,000-character tokens', 'up', tokens(2_000)),
    run('50,000-character tokens', 'up', tokens(50_000)),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(
    '| stream | item after 10,000 turns | largest | write units per state write | activity markers |\n| --- | ---: | ---: | ---: | ---: |',
  );
  for (const r of signalStateSizes())
    console.log(`| ${r.stream} | ${r.finalBytes} B | ${r.maxBytes} B | ${r.writeUnitsPerWrite} | ${r.markers} |`);
}
