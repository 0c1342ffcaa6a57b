/**
 * What grew between two V8 heap snapshots, by constructor (strings together): the bytes and
 * objects each gained, largest first. For the load bench's leak check:
 * `LOAD_SNAPSHOTS=8,12 tsx bench/load.ts --rounds 12` writes /tmp/load-r8.heapsnapshot and
 * /tmp/load-r12.heapsnapshot, then `tsx bench/heap-diff.ts /tmp/load-r8.heapsnapshot /tmp/load-r12.heapsnapshot`.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

const STRING_TYPES = new Set(['string', 'concatenated string', 'sliced string']);

function byConstructor(file: string): Map<string, { count: number; bytes: number }> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [type, name, size] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const t = types[snap.nodes[i + type] ?? 0] ?? '?';
    const key = STRING_TYPES.has(t) ? '(string)' : `${t}:${snap.strings[snap.nodes[i + name] ?? 0] ?? ''}`.slice(0, 80);
    const e = out.get(key) ?? { count: 0, bytes: 0 };
    e.count += 1;
    e.bytes += snap.nodes[i + size] ?? 0;
    out.set(key, e);
  }
  return out;
}

const [before, after] = [process.argv[2], process.argv[3]];
if (!before || !after) throw new Error('usage: tsx bench/heap-diff.ts BEFORE.heapsnapshot AFTER.heapsnapshot');
const a = byConstructor(before);
const rows = [...byConstructor(after)].map(([k, v]) => ({
  k,
  bytes: v.bytes - (a.get(k)?.bytes ?? 0),
  count: v.count - (a.get(k)?.count ?? 0),
}));
for (const r of rows.sort((x, y) => y.bytes - x.bytes).slice(0, 25))
  console.log(`${String(r.bytes).padStart(10)} ${String(r.count).padStart(8)} ${r.k}`);
