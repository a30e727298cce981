import { httpHandler } from '#shared/http/handler.ts';
import { validateSendRequest } from '#shared/schemas/validators.generated.js';
import type { SendRequest } from '#shared/schemas/wallet.ts';
import { loadWalletSettings } from '#shared/wallet/settings.ts';
import { sendMoney } from '#shared/wallet/wallet.ts';

const settings = loadWalletSettings();
const REPLAYED = { 'idempotent-replayed': 'true' } as const;

/** `POST /api/wallet/send`: moves money from the caller's wallet, exactly once per Idempotency-Key. */
export const handler = httpHandler<SendRequest>({
  operationId: 'sendMoney',
  body: validateSendRequest,
  run: async ({ principal, body, rawBody, header }) => {
    const { transfer, replayed } = await sendMoney(
      {
        sub: principal.sub,
        toAddress: body.toAddress,
        rawBody: rawBody ?? '',
        idempotencyKeyHeader: header('idempotency-key'),
      },
      settings,
    );
    // Tells a retrying client that this is the stored outcome of its earlier request.
    return { statusCode: 200, body: transfer, ...(replayed ? { headers: REPLAYED } : {}) };
  },
});
