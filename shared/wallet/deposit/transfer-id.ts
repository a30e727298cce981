import { createHash } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The id a deposit has in the history and at `GET /api/wallet/transfers/{transferId}`: its deposit
 * id itself when that is a UUID (what `wallet:fund` makes), so that the id the operator holds is the
 * one the API shows; otherwise a UUID derived from it (RFC 9562 version 8, from SHA-256), the same
 * on every re-run.
 */
export function depositTransferId(depositId: string): string {
  if (UUID.test(depositId)) return depositId;
  const hex = createHash('sha256').update(`deposit:${depositId}`).digest('hex');
  const variant = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
