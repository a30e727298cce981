/**
 * Build step: the types a client generates from the OpenAPI document (`scripts/client-types.ts`),
 * for `test/e2e/typed-client.test.ts`, which `tsc -p .` compiles against them; and the types of the
 * Swagger Petstore's own document, for `test/e2e/petstore-client.test.ts`.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiJson } from '../shared/openapi.generated.js';
import {
  CLIENT_TYPES_FILE,
  generateClientTypes,
  generateTypesFromFile,
  PETSTORE_DOCUMENT,
  PETSTORE_TYPES_FILE,
} from './client-types.ts';

const outFile = fileURLToPath(CLIENT_TYPES_FILE);
mkdirSync(dirname(outFile), { recursive: true });
await generateClientTypes(openApiJson, outFile);
await generateTypesFromFile(fileURLToPath(PETSTORE_DOCUMENT), fileURLToPath(PETSTORE_TYPES_FILE));
