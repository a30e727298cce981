import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  InsufficientScopeError,
  TemporarilyUnavailableError,
  ValidationError,
  WebhookEndpointRegisteredError,
} from '../errors.ts';
import { logger, setOutcome } from '../observability/telemetry.ts';
import { INVALID_TOKEN_CHALLENGE, insufficientScopeChallenge } from './bearer-challenge.ts';
import { internalErrorMapping, mappingFor } from './error-mapping.ts';
import { problemResponse } from './problem.ts';

const INTERNAL_DETAIL = 'An unexpected error occurred. Quote the requestId when you report it.';

/**
 * The one place where errors become HTTP responses: typed errors (503 included) keep their message,
 * anything else becomes a bare 500 whose details go to the log only, never to the client.
 */
export const problemErrorHandler = (): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  onError: (request) => {
    const { error, event } = request;
    const requestId = event.requestContext?.requestId ?? 'unknown';
    const mapping = mappingFor(error);
    if (!mapping || mapping.status >= 500) {
      // The details go to the log only; the client gets the request id to quote.
      logger.error('Unhandled error', {
        correlation_id: requestId,
        error: {
          name: error?.name,
          message: error?.message,
          stack: error?.stack,
          cause: describeCause(error),
        },
      });
    }
    const { status, slug, title } = mapping ?? internalErrorMapping;
    setOutcome(slug);
    const headers: Record<string, string> = {};
    if (error instanceof InsufficientScopeError) {
      headers['www-authenticate'] = insufficientScopeChallenge(error.requiredScopes);
    } else if (status === 401) {
      headers['www-authenticate'] = INVALID_TOKEN_CHALLENGE;
    } else if (error instanceof TemporarilyUnavailableError) {
      headers['retry-after'] = String(error.retryAfterSeconds);
    } else if (error instanceof WebhookEndpointRegisteredError && error.location !== undefined) {
      headers.location = error.location;
    }
    request.response = problemResponse(
      {
        slug,
        title,
        status,
        detail: mapping && error ? error.message : INTERNAL_DETAIL,
        requestId,
        ...(error instanceof ValidationError
          ? { errors: error.violations, errorCount: error.errorCount }
          : {}),
        ...(error instanceof WebhookEndpointRegisteredError ? { endpointId: error.endpointId } : {}),
      },
      headers,
    );
  },
});

/** The cause chain of an error (e.g. the SDK error behind a 503), for the log. */
function describeCause(error: unknown): unknown {
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause instanceof Error ? { name: cause.name, message: cause.message } : undefined;
}
