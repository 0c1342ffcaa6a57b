/**
 * FNV-1a (32 bits) over a string's UTF-16 code units: a stable, dependency-free hash for
 * short tags and shard numbers. Not for security — nothing here needs an adversary-proof
 * hash, only one that never changes between versions and machines.
 */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
