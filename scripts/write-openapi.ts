/**
 * Regenerates docs/openapi.json from the TypeBox schemas, and the typed
 * client's types from that document (`npm run openapi`).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApi, openApiText } from '../src/http/v1/openapi.js';
import { VERSION } from '../src/platform/index.js';
import { clientTypesText } from './client-types.js';

const documentPath = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));
writeFileSync(documentPath, openApiText());
process.stdout.write(`wrote ${documentPath}\n`);

const typesPath = fileURLToPath(new URL('../../src/client/openapi-types.ts', import.meta.url));
writeFileSync(typesPath, await clientTypesText(JSON.parse(JSON.stringify(buildOpenApi(VERSION)))));
process.stdout.write(`wrote ${typesPath}\n`);
