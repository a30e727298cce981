/**
 * What the local gateway writes back: a function's result or one of API Gateway's own gateway
 * responses (`shared/http/gateway-responses.ts`), rendered from the same template CDK deploys.
 */
import type { ServerResponse } from 'node:http';
import { CORS_ALLOWED_HEADERS, CORS_MAX_AGE_SECONDS } from '#shared/http/cors.ts';
import {
  type GatewayResponse,
  gatewayResponses,
  gatewayResponseTemplate,
} from '#shared/http/gateway-responses.ts';
import { METHOD_NOT_ALLOWED, methodNotAllowedTemplate } from '#shared/http/method-not-allowed.ts';
import { PROBLEM_CONTENT_TYPE } from '#shared/http/problem.ts';

/** A gateway response or a function's result, ready to be written. */
export interface Answer {
  readonly statusCode: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer | string;
}

/** A failure the gateway answers itself, with the gateway response of `type`. */
export class GatewayError extends Error {
  readonly type: GatewayResponse['type'];
  readonly status: number | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;
  /** A more precise `detail` than the gateway response's fixed one, where the local gateway knows more. */
  readonly detail: string | undefined;
  constructor(
    type: GatewayResponse['type'],
    message: string,
    status?: number,
    headers?: Readonly<Record<string, string>>,
    detail?: string,
  ) {
    super(message);
    this.type = type;
    this.status = status;
    this.headers = headers;
    this.detail = detail;
  }
}

/** 405 with `Allow`, as the mock method API Gateway has on each resource for other methods answers. */
export function methodNotAllowedAnswer(allow: string, requestId: string): Answer {
  return {
    statusCode: METHOD_NOT_ALLOWED.status,
    headers: { 'content-type': PROBLEM_CONTENT_TYPE, allow },
    body: methodNotAllowedTemplate(allow).replaceAll('$context.requestId', requestId),
  };
}

/**
 * A CORS preflight answer, as API Gateway's preflight mock method gives it (CDK
 * `addCorsPreflight`): the caller's origin when listed, else the first listed one (which the
 * browser then refuses), and the methods of the resource.
 */
export function preflightAnswer(
  allowedOrigins: readonly string[],
  origin: string | undefined,
  allow: string,
): Answer {
  return {
    statusCode: 204,
    headers: {
      'access-control-allow-origin':
        origin !== undefined && allowedOrigins.includes(origin) ? origin : (allowedOrigins[0] as string),
      vary: 'Origin',
      'access-control-allow-headers': CORS_ALLOWED_HEADERS.join(','),
      'access-control-allow-methods': allow.replaceAll(', ', ','),
      'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
    },
    body: '',
  };
}

/** Renders a gateway response as API Gateway fills in its mapping template. */
export function renderGatewayResponse(
  type: GatewayResponse['type'],
  context: { requestId: string; errorMessage?: string; status?: number; detail?: string },
): { statusCode: number; headers: Record<string, string>; body: string } {
  const response = gatewayResponses.find((r) => r.type === type);
  if (!response) throw new Error(`No gateway response ${type}`);
  let body = gatewayResponseTemplate(response)
    .replaceAll('$context.requestId', context.requestId)
    .replaceAll('$context.error.messageString', JSON.stringify(context.errorMessage ?? response.title));
  if (context.detail !== undefined) body = JSON.stringify({ ...JSON.parse(body), detail: context.detail });
  return {
    statusCode: response.status ?? context.status ?? (type === 'DEFAULT_5XX' ? 500 : 400),
    headers: { 'content-type': PROBLEM_CONTENT_TYPE, ...response.headers },
    body,
  };
}

/** The answer for a failure: its gateway response, or a logged 500 for anything unexpected. */
export function gatewayAnswer(error: unknown, requestId: string): Answer {
  if (!(error instanceof GatewayError)) logFunctionError('gateway', requestId, error);
  const { type, status, message, headers, detail } =
    error instanceof GatewayError
      ? error
      : {
          type: 'DEFAULT_5XX' as const,
          status: 500,
          message: 'Internal error',
          headers: undefined,
          detail: undefined,
        };
  const rendered = renderGatewayResponse(type, {
    requestId,
    errorMessage: message,
    ...(status === undefined ? {} : { status }),
    ...(detail === undefined ? {} : { detail }),
  });
  return headers === undefined ? rendered : { ...rendered, headers: { ...rendered.headers, ...headers } };
}

export function writeAnswer(res: ServerResponse, answer: Answer, requestId: string): void {
  res.writeHead(answer.statusCode, {
    ...answer.headers,
    'content-length': String(Buffer.byteLength(answer.body)),
    'x-amzn-requestid': requestId,
  });
  res.end(answer.body);
}

/** Like the Lambda runtime, which logs an unhandled error before the gateway answers 5xx. */
export function logFunctionError(functionName: string, requestId: string | undefined, error: unknown): void {
  console.error(
    JSON.stringify({
      level: 'ERROR',
      message: `Unhandled error in ${functionName}`,
      ...(requestId === undefined ? {} : { requestId }),
      error:
        error instanceof Error
          ? { name: error.name, message: error.message, stack: error.stack }
          : String(error),
    }),
  );
}
