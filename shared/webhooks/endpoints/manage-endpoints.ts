/**
 * The endpoints a wallet's owner manages (issue 46): register, list, read, change (JSON Merge
 * Patch), delete, rotate the secret, read the delivery log. Each change is a read of the wallet's
 * endpoint set and one conditional write of it, tried again on a fresh read when another change
 * came first; another wallet's endpoint is never found (404), whatever its id.
 */
import { NotFoundError, ValidationError, WebhookEndpointLimitError } from '../../errors.ts';
import { ANSWER_MARGIN_MS, requestDeadline } from '../../request-deadline.ts';
import { type AttemptVerdict, retryMovement } from '../../wallet/model/movement-retry.ts';
import type { Clock, IdSource } from '../../wallet/model/ports.ts';
import { checkEndpointUrl, type DestinationMode, DestinationRefusedError } from '../model/destination.ts';
import {
  ENDPOINT_LIMITS,
  SECRET_OVERLAP_MS,
  SIGNING_SECRETS_MAX,
  type WebhookEndpoint,
} from '../model/endpoint.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../model/event-types.ts';
import { EVENT_RETENTION_MS } from '../model/webhook-event.ts';
import type { SecretSealer } from '../secrets/envelope.ts';
import type {
  AttemptPage,
  EndpointSet,
  StoredEndpoint,
  StoredSecret,
  WebhookEndpointStore,
} from './ports.ts';

export interface EndpointManagementDependencies {
  readonly store: WebhookEndpointStore;
  readonly sealer: SecretSealer;
  readonly clock: Clock;
  /** Fresh endpoint ids. */
  readonly ids: IdSource;
  /** Fresh signing secrets (`whsec_…`). */
  readonly newSecret: () => string;
  readonly mode: DestinationMode;
}

export interface CreateEndpointCommand {
  readonly address: string;
  readonly url: string;
  readonly eventTypes?: readonly WebhookEventType[] | undefined;
  readonly description?: string | undefined;
}

/** A JSON Merge Patch (RFC 7396) of an endpoint: a member left out is kept; `description: null` empties it. */
export interface EndpointPatch {
  readonly url?: string;
  readonly eventTypes?: readonly WebhookEventType[];
  readonly description?: string | null;
  readonly status?: 'enabled' | 'disabled';
}

/** An endpoint with the secret that no later answer shows again. */
export interface EndpointWithSecret {
  readonly endpoint: WebhookEndpoint;
  readonly secret: string;
}

/** Outside a request (tests, scripts): how long a change may keep meeting others' before it gives up. */
const STANDALONE_BUDGET_MS = 10_000;

/** The owner's view: everything but the secrets. */
export function viewOf(stored: StoredEndpoint): WebhookEndpoint {
  const { secrets: _secrets, healthFrom: _healthFrom, ...view } = stored;
  return view;
}

/** The URL as the owner gave it, if it may receive: a 422 naming `/url` otherwise. */
function checkedUrl(url: string, mode: DestinationMode): string {
  try {
    checkEndpointUrl(url, mode);
    return url;
  } catch (error) {
    if (error instanceof DestinationRefusedError)
      throw new ValidationError([{ pointer: '/url', detail: error.message }]);
    throw error;
  }
}

/** The types in the order of the known list, each once: `undefined` (left out) is all of them. */
function normalisedTypes(types: readonly WebhookEventType[] | undefined): WebhookEventType[] {
  return WEBHOOK_EVENT_TYPES.filter((type) => types === undefined || types.includes(type));
}

export function makeEndpointManagement(deps: EndpointManagementDependencies) {
  const { store, sealer, clock, ids } = deps;
  const nowIso = () => new Date(clock.now()).toISOString();

  /**
   * Reads, changes and writes the wallet's set until its write is the first, as a movement of the
   * ledger does: another change of the same wallet's endpoints only makes it read again, until no
   * write could end before the request's answer is due (then 503, nothing written). Each round has
   * a winner, and a refusal (the 10-endpoint bound, an unknown id) writes nothing, so owners racing
   * each other all get their answer.
   */
  async function change<T>(
    address: string,
    apply: (set: EndpointSet) => Promise<{ set: EndpointSet; result: T }>,
  ) {
    const answerBy = requestDeadline() ?? Date.now() + STANDALONE_BUDGET_MS;
    const deadline = {
      at: answerBy - store.longestWriteMs - ANSWER_MARGIN_MS,
      message: 'The endpoints of this wallet are being changed by other requests; retry the request',
    };
    return retryMovement(deadline, async (_n, beforeWrite): Promise<AttemptVerdict<T>> => {
      const { set, result } = await apply(await store.readEndpoints(address));
      beforeWrite();
      return (await store.writeEndpoints(set)) ? { done: result } : { again: 'after-pause' };
    });
  }

  function find(set: EndpointSet, endpointId: string): StoredEndpoint {
    const endpoint = set.endpoints.find((e) => e.id === endpointId);
    if (!endpoint) throw new NotFoundError('No webhook endpoint of yours has this id');
    return endpoint;
  }

  const replace = (set: EndpointSet, endpoint: StoredEndpoint): EndpointSet => ({
    ...set,
    endpoints: set.endpoints.map((e) => (e.id === endpoint.id ? endpoint : e)),
  });

  async function sealed(
    secret: string,
    address: string,
    endpointId: string,
    at: string,
  ): Promise<StoredSecret> {
    return { sealed: await sealer.seal(secret, { address, endpointId }), createdAt: at };
  }

  return {
    async create(command: CreateEndpointCommand): Promise<EndpointWithSecret> {
      const url = checkedUrl(command.url, deps.mode);
      const id = ids.next();
      const secret = deps.newSecret();
      const createdAt = nowIso();
      // Sealed once a write may store it, and only once: a request refused by the bound seals
      // nothing (deployed, a KMS call), and a retried write stores the secret the answer shows.
      let sealedOnce: StoredEndpoint | undefined;
      const stored = await change(command.address, async (set) => {
        if (set.endpoints.length >= ENDPOINT_LIMITS.perWallet) {
          throw new WebhookEndpointLimitError(
            `A wallet has at most ${ENDPOINT_LIMITS.perWallet} webhook endpoints: delete one first`,
          );
        }
        sealedOnce ??= {
          id,
          address: command.address,
          url,
          eventTypes: normalisedTypes(command.eventTypes),
          description: command.description ?? '',
          status: 'enabled',
          createdAt,
          updatedAt: createdAt,
          secrets: [await sealed(secret, command.address, id, createdAt)],
        };
        return { set: { ...set, endpoints: [...set.endpoints, sealedOnce] }, result: sealedOnce };
      });
      return { endpoint: viewOf(stored), secret };
    },

    /** Newest first. */
    async list(address: string): Promise<WebhookEndpoint[]> {
      const set = await store.readEndpoints(address);
      return [...set.endpoints].reverse().map(viewOf);
    },

    async get(address: string, endpointId: string): Promise<WebhookEndpoint> {
      return viewOf(find(await store.readEndpoints(address), endpointId));
    },

    async update(address: string, endpointId: string, patch: EndpointPatch): Promise<WebhookEndpoint> {
      const url = patch.url === undefined ? undefined : checkedUrl(patch.url, deps.mode);
      return change(address, async (set) => {
        const before = find(set, endpointId);
        const enabling = patch.status === 'enabled' && before.status === 'disabled';
        const disabling = patch.status === 'disabled' && before.status === 'enabled';
        const moving = url !== undefined && url !== before.url;
        // Enabled again or moved, its health starts anew: the failures before are not the new one's.
        const { disabledReason: _reason, failingSince: _since, ...healthy } = before;
        const { failingSince: _failing, ...unfailing } = before;
        const now = nowIso();
        const after: StoredEndpoint = {
          ...(enabling ? healthy : moving ? unfailing : before),
          ...(url === undefined ? {} : { url }),
          ...(patch.eventTypes === undefined ? {} : { eventTypes: normalisedTypes(patch.eventTypes) }),
          ...(patch.description === undefined ? {} : { description: patch.description ?? '' }),
          ...(disabling ? { status: 'disabled' as const, disabledReason: 'manual' as const } : {}),
          updatedAt: now,
          ...(enabling ? { status: 'enabled' as const } : {}),
          ...(enabling || moving ? { healthFrom: now } : {}),
        };
        return { set: replace(set, after), result: viewOf(after) };
      });
    },

    async remove(address: string, endpointId: string): Promise<void> {
      await change(address, async (set) => {
        find(set, endpointId);
        return {
          set: { ...set, endpoints: set.endpoints.filter((e) => e.id !== endpointId) },
          result: undefined,
        };
      });
    },

    /**
     * A new secret; those it replaces keep signing beside it until 24 h after they were rotated
     * out (at most SIGNING_SECRETS_MAX sign), so a receiver can move to the new one without losing
     * a delivery, even when it retried a rotation whose answer it never got.
     */
    async rotateSecret(address: string, endpointId: string): Promise<EndpointWithSecret> {
      const secret = deps.newSecret();
      const at = nowIso();
      const now = clock.now();
      const retiresAt = new Date(now + SECRET_OVERLAP_MS).toISOString();
      // Sealed after the endpoint is found (an unknown id seals nothing), once for every retry.
      let next: StoredSecret | undefined;
      const endpoint = await change(address, async (set) => {
        const before = find(set, endpointId);
        next ??= await sealed(secret, address, endpointId, at);
        const signing = before.secrets
          .filter((s) => s.retiresAt === undefined || Date.parse(s.retiresAt) > now)
          .map((s) => (s.retiresAt === undefined ? { ...s, retiresAt } : s));
        const after: StoredEndpoint = {
          ...before,
          secrets: [next, ...signing].slice(0, SIGNING_SECRETS_MAX),
          updatedAt: at,
        };
        return { set: replace(set, after), result: viewOf(after) };
      });
      return { endpoint, secret };
    },

    async deliveries(
      address: string,
      endpointId: string,
      page: { limit: number; cursor?: string | undefined },
    ): Promise<AttemptPage> {
      find(await store.readEndpoints(address), endpointId);
      // An attempt is kept as long as its event, 30 days; DynamoDB's TTL deletes an expired item
      // only within a few days, so what is stored is no answer by itself. Newest first: the first
      // expired attempt ends the log.
      const attempts = await store.listAttempts(endpointId, page);
      const oldest = clock.now() - EVENT_RETENTION_MS;
      const items = attempts.items.filter((attempt) => Date.parse(attempt.attemptedAt) >= oldest);
      return items.length < attempts.items.length ? { items } : attempts;
    },
  };
}

export type EndpointManagement = ReturnType<typeof makeEndpointManagement>;
