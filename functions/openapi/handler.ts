import { httpHandler } from '#shared/http/handler.ts';
import { buildOpenApiDocument } from '#shared/openapi.ts';

// Built once per container: the document only changes with a deployment.
const document = buildOpenApiDocument();

/** `GET /api/openapi.json`: the OpenAPI 3.1 document of this API (public). */
export const handler = httpHandler({
  operationId: 'getOpenApi',
  run: async () => ({ statusCode: 200, body: document, headers: { 'cache-control': 'public, max-age=300' } }),
});
