/**
 * The dispatcher as the integration tests run it, on loopback. Apart from the receiver
 * (./webhook-receiver.ts), which the webhooks benchmark imports: this module loads the dispatcher's
 * handler, whose cold start reads the stack's environment.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createWebhookDispatcher } from '#functions/dispatch-webhooks/handler.ts';
import { createHttpDeliver, type HttpDeliverOptions } from '#shared/webhooks/delivery/http-delivery.ts';
import type { Deliver } from '#shared/webhooks/model/delivery.ts';
import type { SecretSealer } from '#shared/webhooks/secrets/envelope.ts';

/**
 * The HTTP delivery of the tests' dispatchers: the real one, with a resolver that resolves no name.
 * Receivers listen on 127.0.0.1, which needs none; a task another test made for a name (its
 * endpoints are https to merchant.example.com) then fails before a DNS query leaves the machine.
 */
export const loopbackDeliver = (options: Pick<HttpDeliverOptions, 'timeoutMs'> = {}) =>
  createHttpDeliver({
    mode: 'local',
    resolve: async (hostname) => {
      throw new Error(`the tests resolve no name (${hostname}): receivers listen on 127.0.0.1`);
    },
    ...options,
  });

/**
 * The real dispatcher as an integration test runs it: local destinations, a retry schedule of two
 * attempts a second apart, delivering through `deliver` ({@link loopbackDeliver} unless given).
 */
export const loopbackDispatcher = (options: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly sealer: SecretSealer;
  readonly deliver?: Deliver;
}) => createWebhookDispatcher({ mode: 'local', schedule: [0, 1], deliver: loopbackDeliver(), ...options });
