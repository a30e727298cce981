/**
 * The endpoints a wallet's owner manages (issue 46): register, list, read, change (JSON Merge
 * Patch), delete, rotate the secret, read the delivery log. Each change is a read of the wallet's
 * endpoint set and one conditional write of it, tried again on a fresh read when another change
 * came first; another wallet's endpoint is never found (404), whatever its id.
 */
import { createHash } from 'node:crypto';
import {
  IdempotencyKeyReuseError,
  NotFoundError,
  ValidationError,
  WebhookEndpointLimitError,
} from '../../errors.ts';
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
  CreateKeyRecord,
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
  /** How long a registration's Idempotency-Key holds, as a transfer's (`wallet:idempotencyTtlSeconds`). */
  readonly keyTtlSeconds: number;
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

/**
 * What a registration with an Idempotency-Key used before by the same wallet with the same request
 * finds: the endpoint that request registered (`exists`: not deleted since). Its secret is not
 * here: the registering function may seal secrets, never open one.
 */
export interface RegisteredBefore {
  readonly registeredBefore: { readonly endpointId: string; readonly exists: boolean };
}

/**
 * The request as the endpoint it would register: two bodies that register the same endpoint (the
 * event types in another order or repeated, `eventTypes` left out or listing every type, no
 * description or an empty one) are the same request, as `2.5` and `2.50` are one amount to send.
 */
function fingerprintOf(url: string, command: CreateEndpointCommand): string {
  const request = [url, normalisedTypes(command.eventTypes), command.description ?? ''];
  return createHash('sha256').update(JSON.stringify(request)).digest('base64url');
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
    return changeKeyed(
      () => store.readEndpoints(address),
      async (set) => ({ ...(await apply(set)), write: true }),
    );
  }

  /**
   * {@link change}, reading with `read`; `apply` may write the set with a key's record, or answer
   * without writing (`write: false`).
   */
  async function changeKeyed<R, T>(
    read: () => Promise<R>,
    apply: (read: R) => Promise<{ set: EndpointSet; keyRecord?: CreateKeyRecord; result: T; write: boolean }>,
  ) {
    const answerBy = requestDeadline() ?? Date.now() + STANDALONE_BUDGET_MS;
    const deadline = {
      at: answerBy - store.longestWriteMs - ANSWER_MARGIN_MS,
      message: 'The endpoints of this wallet are being changed by other requests; retry the request',
    };
    return retryMovement(deadline, async (_n, beforeWrite): Promise<AttemptVerdict<T>> => {
      const { set, keyRecord, result, write } = await apply(await read());
      if (!write) return { done: result };
      beforeWrite();
      return (await store.writeEndpoints(set, keyRecord)) ? { done: result } : { again: 'after-pause' };
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

  /**
   * Registers the endpoint, with `key`'s record in the same write when given. Keyless, it is the
   * read and the write it always was; keyed, the read takes the key's record too (one call).
   */
  async function register(
    command: CreateEndpointCommand,
    key: string | undefined,
  ): Promise<EndpointWithSecret | RegisteredBefore> {
    const url = checkedUrl(command.url, deps.mode);
    const id = ids.next();
    const secret = deps.newSecret();
    const createdAt = nowIso();
    const writtenAt = Math.floor(clock.now() / 1000);
    const keyRecord: CreateKeyRecord | undefined =
      key === undefined
        ? undefined
        : {
            key,
            fingerprint: fingerprintOf(url, command),
            endpointId: id,
            expiresAt: writtenAt + deps.keyTtlSeconds,
            writtenAt,
          };
    const read = async (): Promise<{ set: EndpointSet; keyRecord?: CreateKeyRecord | undefined }> =>
      key === undefined
        ? { set: await store.readEndpoints(command.address) }
        : store.readEndpointsAndKey(command.address, key);
    // Sealed once a write may store it, and only once: a request refused by the bound seals
    // nothing (deployed, a KMS call), and a retried write stores the secret the answer shows.
    let sealedOnce: StoredEndpoint | undefined;
    return changeKeyed<
      { set: EndpointSet; keyRecord?: CreateKeyRecord | undefined },
      EndpointWithSecret | RegisteredBefore
    >(read, async ({ set, keyRecord: used }) => {
      // Before the bound: the endpoint the key registered may be the tenth.
      if (keyRecord !== undefined && used !== undefined && used.expiresAt >= writtenAt) {
        if (used.fingerprint !== keyRecord.fingerprint) {
          throw new IdempotencyKeyReuseError(
            'This Idempotency-Key was used to register another webhook endpoint',
          );
        }
        const exists = set.endpoints.some((e) => e.id === used.endpointId);
        return { set, result: { registeredBefore: { endpointId: used.endpointId, exists } }, write: false };
      }
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
      return {
        set: { ...set, endpoints: [...set.endpoints, sealedOnce] },
        ...(keyRecord === undefined ? {} : { keyRecord }),
        result: { endpoint: viewOf(sealedOnce), secret },
        write: true,
      };
    });
  }

  return {
    async create(command: CreateEndpointCommand): Promise<EndpointWithSecret> {
      const created = await register(command, undefined);
      if ('registeredBefore' in created) throw new Error('A registration without a key replays nothing');
      return created;
    },

    /**
     * {@link create} with the caller's Idempotency-Key, recorded in the write that registers the
     * endpoint: the wallet's next registration with the key and the same request registers nothing
     * and names the endpoint the first one registered, until the key expires; with another
     * request, refused (422). Concurrent ones with one key register one endpoint: the others' write
     * is refused by the key's record and they read it.
     */
    async createWithKey(
      command: CreateEndpointCommand,
      key: string,
    ): Promise<EndpointWithSecret | RegisteredBefore> {
      return register(command, key);
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
