// Writes events/schemas/*.json from the zod contracts. A test fails when they are stale.
import { writeFileSync } from 'node:fs';
import { renderJsonSchemas } from './json-schema.js';

for (const { file, text } of renderJsonSchemas()) {
  writeFileSync(new URL(`./schemas/${file}`, import.meta.url), text);
  console.log(`wrote events/schemas/${file}`);
}
