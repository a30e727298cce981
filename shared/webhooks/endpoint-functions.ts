/**
 * What the endpoint functions (functions/*-webhook*) share: the use cases built on a store, and
 * the endpoint as JSON. Each function's handler.ts stays its composition root: it builds the store
 * on its own client and hands it in.
 */
import { systemClock } from '../wallet/model/ports.ts';
import { newEndpointId } from './endpoint-id.ts';
import { type EndpointWithSecret, makeEndpointManagement } from './endpoints/manage-endpoints.ts';
import type { WebhookEndpointStore } from './endpoints/ports.ts';
import type { DestinationMode } from './model/destination.ts';
import type { WebhookEndpoint } from './model/endpoint.ts';
import type { SecretSealer } from './secrets/envelope.ts';
import { newSigningSecret } from './secrets/signing-secret.ts';

export interface EndpointFunctionDependencies {
  /** The webhooks table (shared/webhooks/dynamodb/endpoint-store.ts), built by the function's handler.ts. */
  readonly store: WebhookEndpointStore;
  readonly mode: DestinationMode;
  /** Only the functions that register or rotate get one. */
  readonly sealer?: SecretSealer;
  /** How long a registration's Idempotency-Key holds; the wallet's least, a day, unless given. */
  readonly keyTtlSeconds?: number;
}

const NO_SEALER: SecretSealer = {
  seal: () => Promise.reject(new Error('This function holds no key for signing secrets')),
  open: () => Promise.reject(new Error('This function holds no key for signing secrets')),
};

export function createEndpointManagement(deps: EndpointFunctionDependencies) {
  return makeEndpointManagement({
    store: deps.store,
    sealer: deps.sealer ?? NO_SEALER,
    clock: systemClock,
    ids: { next: newEndpointId },
    newSecret: newSigningSecret,
    mode: deps.mode,
    keyTtlSeconds: deps.keyTtlSeconds ?? 86_400,
  });
}

/** An endpoint as answered, in the schema's member order. */
export function endpointJson(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    eventTypes: endpoint.eventTypes,
    description: endpoint.description,
    status: endpoint.status,
    ...(endpoint.disabledReason === undefined ? {} : { disabledReason: endpoint.disabledReason }),
    ...(endpoint.failingSince === undefined ? {} : { failingSince: endpoint.failingSince }),
    createdAt: endpoint.createdAt,
    updatedAt: endpoint.updatedAt,
  };
}

export function endpointWithSecretJson({ endpoint, secret }: EndpointWithSecret) {
  return { ...endpointJson(endpoint), secret };
}
