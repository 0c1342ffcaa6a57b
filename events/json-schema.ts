import * as z from 'zod';
import { contracts } from './index.js';

/** The JSON Schema text publishers see for each contract, generated from the zod schemas. */
export function renderJsonSchemas(): Array<{ file: string; text: string }> {
  return contracts.map(({ file, id, schema }) => {
    const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' });
    const text = `${JSON.stringify({ $id: `urn:reflective-memory:${id}`, ...json }, null, 2)}\n`;
    return { file, text };
  });
}
