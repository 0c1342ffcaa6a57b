import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { LocomoConversation } from '../../infra/local/locomo.js';

/** The LoCoMo data: ../shared/data/locomo beside the clone (as CI has it), or $LOCOMO_DIR. */
export function readLocomo(file: string): LocomoConversation {
  const dir = process.env.LOCOMO_DIR ?? fileURLToPath(new URL('../../../shared/data/locomo/', import.meta.url));
  const path = `${dir.replace(/\/$/, '')}/${file}`;
  if (!existsSync(path)) throw new Error(`LoCoMo data not found at ${path}: clone next to shared/ or set LOCOMO_DIR`);
  return JSON.parse(readFileSync(path, 'utf8')) as LocomoConversation;
}
