import {
  AlreadyExistsError,
  EndpointDisabledError,
  IdempotencyKeyReuseError,
  InsufficientFundsError,
  InsufficientScopeError,
  InvalidParameterError,
  LookalikeAddressError,
  MalformedBodyError,
  NotFoundError,
  PayloadTooLargeError,
  PetPhotoLimitError,
  PreconditionFailedError,
  RecipientLimitError,
  ReplayInProgressError,
  TemporarilyUnavailableError,
  UnauthenticatedError,
  UnknownRecipientError,
  UnsupportedMediaTypeError,
  ValidationError,
  WebhookEndpointLimitError,
  WebhookEndpointRegisteredError,
} from '../errors.ts';

/** How one class of typed error looks on the wire. */
export interface ErrorMapping {
  status: number;
  slug: string;
  title: string;
}

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * The one table from typed errors to HTTP. The OpenAPI document lists the same entries, so what
 * the service can answer and what it documents cannot drift apart.
 */
export const errorMappings: ReadonlyArray<readonly [ErrorClass, ErrorMapping]> = [
  [MalformedBodyError, { status: 400, slug: 'malformed-body', title: 'Malformed request body' }],
  [InvalidParameterError, { status: 400, slug: 'invalid-parameter', title: 'Invalid parameter' }],
  [UnauthenticatedError, { status: 401, slug: 'unauthorized', title: 'Unauthorized' }],
  [InsufficientScopeError, { status: 403, slug: 'insufficient-scope', title: 'Insufficient scope' }],
  [NotFoundError, { status: 404, slug: 'not-found', title: 'Not found' }],
  [AlreadyExistsError, { status: 409, slug: 'already-exists', title: 'Already exists' }],
  [
    ReplayInProgressError,
    { status: 409, slug: 'replay-in-progress', title: 'A replay of this endpoint is in progress' },
  ],
  [
    EndpointDisabledError,
    { status: 409, slug: 'endpoint-disabled', title: 'The webhook endpoint is disabled' },
  ],
  [
    WebhookEndpointRegisteredError,
    {
      status: 409,
      slug: 'webhook-endpoint-registered',
      title: 'Webhook endpoint already registered with this Idempotency-Key',
    },
  ],
  [PreconditionFailedError, { status: 412, slug: 'precondition-failed', title: 'Precondition failed' }],
  [
    LookalikeAddressError,
    { status: 409, slug: 'lookalike-address', title: "Looks like another wallet's address" },
  ],
  // The slug of API Gateway's own 413 (shared/http/gateway-responses.ts): one problem type, whoever judged the size.
  [PayloadTooLargeError, { status: 413, slug: 'payload-too-large', title: 'Payload too large' }],
  [
    UnsupportedMediaTypeError,
    { status: 415, slug: 'unsupported-media-type', title: 'Unsupported media type' },
  ],
  [ValidationError, { status: 422, slug: 'validation-failed', title: 'Validation failed' }],
  [InsufficientFundsError, { status: 422, slug: 'insufficient-funds', title: 'Insufficient funds' }],
  [UnknownRecipientError, { status: 422, slug: 'unknown-recipient', title: 'Unknown recipient' }],
  [
    RecipientLimitError,
    { status: 422, slug: 'recipient-balance-limit', title: 'Recipient balance limit reached' },
  ],
  [
    IdempotencyKeyReuseError,
    { status: 422, slug: 'idempotency-key-reused', title: 'Idempotency-Key reused' },
  ],
  [
    WebhookEndpointLimitError,
    { status: 422, slug: 'webhook-endpoint-limit', title: 'Webhook endpoint limit reached' },
  ],
  [PetPhotoLimitError, { status: 422, slug: 'pet-photo-limit', title: 'Pet photo limit reached' }],
  [
    TemporarilyUnavailableError,
    { status: 503, slug: 'temporarily-unavailable', title: 'Service temporarily unavailable' },
  ],
];

/** What every error not in the table becomes: its message never reaches the client. */
export const internalErrorMapping: ErrorMapping = {
  status: 500,
  slug: 'internal',
  title: 'Internal server error',
};

/** Finds the mapping of an error; `undefined` for an unexpected one. */
export function mappingFor(error: unknown): ErrorMapping | undefined {
  return errorMappings.find(([errorClass]) => error instanceof errorClass)?.[1];
}
