import { httpHandler } from '#shared/http/handler.ts';
import { jsonText } from '#shared/http/problem.ts';
import { pageHtml } from './page.generated.js';

/**
 * What the page may load: its own scripts, style sheet and the API, nothing else; `data:` images
 * only because Swagger UI's style sheet draws its icons as inline SVG. No inline script or style,
 * no framing, no form posting elsewhere.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const headers = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  // Revalidated often: it names the (hashed, long-cached) assets of the current deployment.
  'cache-control': 'public, max-age=300',
};

/** `GET /api/docs`: the interactive API reference (Swagger UI) over `/api/openapi.json` (public). */
export const handler = httpHandler({
  operationId: 'getApiDocs',
  // `jsonText` sends the text verbatim; the content type above replaces the JSON one.
  run: async () => ({ statusCode: 200, body: jsonText(pageHtml), headers }),
});
