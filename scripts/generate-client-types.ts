/**
 * Build step: the types a client generates from the OpenAPI document (`scripts/client-types.ts`),
 * for `test/e2e/typed-client.test.ts`, which `tsc -p .` compiles against them.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiJson } from '../shared/openapi.generated.js';
import { CLIENT_TYPES_FILE, generateClientTypes } from './client-types.ts';

const outFile = fileURLToPath(CLIENT_TYPES_FILE);
mkdirSync(dirname(outFile), { recursive: true });
await generateClientTypes(openApiJson, outFile);
