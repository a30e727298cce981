import { NotFoundError } from '#shared/errors.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { jsonText } from '#shared/http/problem.ts';
import { assets } from './assets.generated.js';

/** `GET /api/docs/{asset}`: a script or style sheet of the reference page (public). */
export const handler = httpHandler({
  operationId: 'getApiDocsAsset',
  run: async ({ pathParameters }) => {
    const asset = assets.get(pathParameters.asset ?? '');
    if (!asset) throw new NotFoundError('No such asset of the API reference page');
    return {
      statusCode: 200,
      // Verbatim: `jsonText` skips the JSON serialisation; the content type replaces the JSON one.
      body: jsonText(asset.body),
      headers: {
        'content-type': asset.contentType,
        'x-content-type-options': 'nosniff',
        // The name carries a hash of the content: a new version is a new name.
        'cache-control': 'public, max-age=31536000, immutable',
      },
    };
  },
});
