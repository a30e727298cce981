import { httpHandler } from '#shared/http/handler.ts';
import { loadWalletSettings } from '#shared/wallet/settings.ts';
import { getBalance } from '#shared/wallet/wallet.ts';

const settings = loadWalletSettings();

/** `GET /api/wallet/balance`: the balance of the caller's own wallet. */
export const handler = httpHandler({
  operationId: 'getBalance',
  run: async ({ principal }) => ({ statusCode: 200, body: await getBalance(principal.sub, settings) }),
});
