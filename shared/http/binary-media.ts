/**
 * The API's `binaryMediaTypes` (CDK's RestApi, and the local gateway alike). A request body of one
 * of these types reaches the function base64-encoded, byte for byte; any other is passed as UTF-8
 * text, which would mangle an image. A function's base64 answer goes out as bytes to a client whose
 * first `Accept` type matches one of them (API Gateway's rule for Lambda proxy integrations), so
 * an image is read with `Accept: image/*` (docs/decisions/pet-images.md). JSON stays text.
 */
export const BINARY_MEDIA_TYPES = ['application/octet-stream', 'image/*'] as const;

/** Whether a media type (a Content-Type or an Accept entry, parameters allowed) matches one of `patterns`. */
export function matchesMediaType(
  value: string | undefined,
  patterns: readonly string[] = BINARY_MEDIA_TYPES,
): boolean {
  const mediaType = value?.split(';')[0]?.trim().toLowerCase();
  if (!mediaType) return false;
  const [actualType, actualSubtype] = mediaType.split('/');
  return patterns.some((pattern) => {
    const [type, subtype] = pattern.toLowerCase().split('/');
    return (type === '*' || type === actualType) && (subtype === '*' || subtype === actualSubtype);
  });
}
