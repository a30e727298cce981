import { ValidationError } from '#shared/errors.ts';
import { type HttpRequest, httpHandler } from '#shared/http/handler.ts';
import { idempotencyKeyOf } from '#shared/http/idempotency-key.ts';
import { addMetric, setOutcome } from '#shared/observability/telemetry.ts';
import { validateSendRequest } from '#shared/schemas/validators.generated.js';
import type { SendRequest } from '#shared/schemas/wallet.ts';
import { matchingOf } from '#shared/wallet/model/matching.ts';
import {
  type AmountProblem,
  formatMinor,
  MAX_AMOUNT_TEXT_LENGTH,
  moneyJson,
  numberSource,
  parseAmount,
} from '#shared/wallet/model/money.ts';
import type { WalletSettings } from '#shared/wallet/model/settings.ts';
import type { SendMoneyCommand, SendMoneyResult } from '#shared/wallet/send/send-money.ts';

const REPLAYED = { 'idempotent-replayed': 'true' } as const;

const AMOUNT_DETAILS: Record<AmountProblem, (s: WalletSettings) => string> = {
  'not-a-number': () => 'must be a JSON number',
  'not-positive': () => 'must be greater than 0',
  'too-precise': (s) => `must have at most ${s.currency.decimals} decimals (${s.currency.code})`,
  'too-large': (s) => `must be at most ${formatMinor(s.maxTransferMinor, s.currency)} per transfer`,
  'too-long': () => `must be written in at most ${MAX_AMOUNT_TEXT_LENGTH} characters`,
};

export interface SendMoneyEdge {
  readonly sendMoney: (command: SendMoneyCommand) => Promise<SendMoneyResult>;
  readonly settings: WalletSettings;
}

/**
 * `POST /api/wallet/send` over HTTP: the request becomes a {@link SendMoneyCommand}, the result a
 * 200 with the transfer. The schema has checked the body's shape (a number for `amount`); the
 * amount's value is decided here, once, on its JSON text ({@link parseAmount}): precision, sign,
 * size. Domain errors go on to the one error mapping.
 */
export function sendMoneyHttpHandler({ sendMoney, settings }: SendMoneyEdge) {
  return httpHandler<SendRequest>({
    operationId: 'sendMoney',
    body: validateSendRequest,
    run: async (request) => {
      const { transfer, status, replayed } = await sendMoney(sendCommandOf(request, settings));
      if (replayed) {
        setOutcome('idempotent-replay');
        addMetric('IdempotentReplays', 1);
      } else {
        addMetric('Transfers', 1);
        addMetric('TransferVolumeMinor', transfer.amountMinor, 'None');
      }
      const body = {
        transferId: transfer.transferId,
        fromAddress: transfer.fromAddress,
        toAddress: transfer.toAddress,
        amount: moneyJson(transfer.amountMinor, settings.currency),
        currency: transfer.currency,
        status,
        createdAt: transfer.createdAt,
        ...matchingOf(transfer),
      };
      // Tells a retrying client that this is the stored outcome of its earlier request.
      return { statusCode: 200, body, ...(replayed ? { headers: REPLAYED } : {}) };
    },
  });
}

/** The command a validated request asks for; a ValidationError or InvalidParameterError if none. */
export function sendCommandOf(request: HttpRequest<SendRequest>, settings: WalletSettings): SendMoneyCommand {
  // The exact amount from the JSON text as sent: the parsed body holds a float.
  const parsed = parseAmount(
    numberSource(request.rawBody ?? '', 'amount') ?? '',
    settings.currency,
    settings.maxTransferMinor,
  );
  if ('problem' in parsed) {
    throw new ValidationError([{ pointer: '/amount', detail: AMOUNT_DETAILS[parsed.problem](settings) }]);
  }
  const sub = request.principal.sub;
  if (request.body.toAddress === sub) {
    throw new ValidationError([{ pointer: '/toAddress', detail: 'must not be your own address' }]);
  }
  return {
    sub,
    toAddress: request.body.toAddress,
    amountMinor: parsed.minor,
    // Every line of the header: a repeated one is refused, not decided by which came last.
    idempotencyKey: idempotencyKeyOf(request.headerValues('idempotency-key')),
    answerBy: request.timesOutAt,
    reference: request.body.reference,
    // `{}` is no metadata: the same request, and nothing stored.
    metadata:
      request.body.metadata && Object.keys(request.body.metadata).length > 0
        ? (request.body.metadata as Record<string, string>)
        : undefined,
  };
}
