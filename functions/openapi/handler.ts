import { httpHandler } from '#shared/http/handler.ts';
import { jsonText } from '#shared/http/problem.ts';
import { openApiJson } from '#shared/openapi.generated.js';

// Serialised at build time (`npm run generate`): the document only changes with a deployment.
const document = jsonText(openApiJson);

/** `GET /api/openapi.json`: the OpenAPI 3.1 document of this API (public). */
export const handler = httpHandler({
  operationId: 'getOpenApi',
  run: async () => ({ statusCode: 200, body: document, headers: { 'cache-control': 'public, max-age=300' } }),
});
