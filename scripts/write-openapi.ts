/** Regenerates docs/openapi.json from the TypeBox schemas (`npm run openapi`). */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openApiText } from '../src/http/v1/openapi.js';

const target = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));
writeFileSync(target, openApiText());
process.stdout.write(`wrote ${target}\n`);
