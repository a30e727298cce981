import { gunzipSync } from 'node:zlib';
import { NotFoundError } from '#shared/errors.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { jsonText } from '#shared/http/problem.ts';
import { assets } from './assets.generated.js';

/** Each asset's text, inflated on its first request rather than at cold start, then kept. */
const texts = new Map<string, string>();

function textOf(name: string, gzipBase64: string): string {
  let text = texts.get(name);
  if (text === undefined) {
    text = gunzipSync(Buffer.from(gzipBase64, 'base64')).toString('utf8');
    texts.set(name, text);
  }
  return text;
}

/** `GET /api/docs/{asset}`: a script or style sheet of the reference page (public). */
export const handler = httpHandler({
  operationId: 'getApiDocsAsset',
  run: async ({ pathParameters }) => {
    const name = pathParameters.asset ?? '';
    const asset = assets.get(name);
    if (!asset) throw new NotFoundError('No such asset of the API reference page');
    return {
      statusCode: 200,
      // Verbatim: `jsonText` skips the JSON serialisation; the content type replaces the JSON one.
      body: jsonText(textOf(name, asset.gzipBase64)),
      headers: {
        'content-type': asset.contentType,
        'x-content-type-options': 'nosniff',
        // The name carries a hash of the content: a new version is a new name.
        'cache-control': 'public, max-age=31536000, immutable',
      },
    };
  },
});
