import { httpHandler } from '#shared/http/handler.ts';
import { jsonText } from '#shared/http/problem.ts';
import { buildOpenApiDocument } from '#shared/openapi.ts';

// Built and serialised once per container: the document only changes with a deployment.
const document = jsonText(JSON.stringify(buildOpenApiDocument()));

/** `GET /api/openapi.json`: the OpenAPI 3.1 document of this API (public). */
export const handler = httpHandler({
  operationId: 'getOpenApi',
  run: async () => ({ statusCode: 200, body: document, headers: { 'cache-control': 'public, max-age=300' } }),
});
