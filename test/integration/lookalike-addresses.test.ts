import { describe, expect, it } from 'vitest';
import { handler as getBalance } from '#functions/get-balance/handler.ts';
import { handler as send } from '#functions/send-money/handler.ts';
import { apiEvent, invoke, sendEvent, uniqueSub } from '../support/events.ts';
import { fund } from '../support/wallet.ts';

const balanceOf = async (sub: string): Promise<unknown> =>
  (await invoke(getBalance, apiEvent({ sub, scopes: ['read:wallet'], path: '/api/wallet/balance' }))).json
    .balance;

const sendAs = (sub: string, toAddress: string) => invoke(send, sendEvent(sub, { toAddress, amount: 1 }));

/**
 * Each one written into the middle of an address that looks the same, or nearly, on screen. The
 * body is sent as JSON.stringify writes it: the characters themselves, not `\u` escapes.
 */
const LOOKALIKES: readonly (readonly [string, string])[] = [
  ['a zero-width joiner (Cf)', '\u200D'],
  ['a zero-width space (Cf)', '\u200B'],
  ['a right-to-left override (Cf, bidi)', '\u202E'],
  ['a left-to-right mark (Cf, bidi)', '\u200E'],
  ['a byte order mark (Cf)', '\uFEFF'],
  ['a soft hyphen (Cf)', '\u00AD'],
  ['a tag character beyond the BMP (Cf)', '\u{E0041}'],
  ['a private-use character (Co)', '\uE000'],
  ['a supplementary private-use character (Co)', '\u{F0000}'],
  ['an unassigned code point (Cn)', '\u0378'],
  ['a lone surrogate (Cs)', '\uD800'],
  ['a line separator (Zl)', '\u2028'],
  ['a combining accent that NFC composes (not NFC)', 'e\u0301'],
];

describe('send money refuses a lookalike address with 422, moving nothing', () => {
  it.each(LOOKALIKES)('%s', async (_label, inserted) => {
    const alice = uniqueSub('alice');
    await fund(alice, 100);
    const lookalike = `${alice.slice(0, 5)}${inserted}${alice.slice(5)}`;
    const response = await sendAs(alice, lookalike);
    expect(response.statusCode).toBe(422);
    expect(response.contentType).toBe('application/problem+json');
    expect(response.json.type).toMatch(/validation-failed$/);
    expect(response.json.errors).toEqual([expect.objectContaining({ pointer: '/toAddress' })]);
    expect(await balanceOf(alice)).toBe(1);
    expect(await balanceOf(lookalike)).toBe(0);
  });
});

describe('send money accepts addresses beyond ASCII that are what they look like', () => {
  it.each([
    ['an accented letter, composed (NFC)', '\u00E9'],
    ['CJK', '\u6771\u4EAC'],
    ['an emoji beyond the BMP', '\u{1F45B}'],
    ['a space and punctuation', ' @+.'],
  ])('%s', async (_label, text) => {
    const [alice, bob] = [uniqueSub('alice'), `${uniqueSub('bob')}${text}`];
    await fund(alice, 100);
    // The recipient holds a wallet already: only the address rule is under test here.
    await fund(bob, 1);
    const response = await sendAs(alice, bob);
    expect(response.statusCode).toBe(200);
    expect(await balanceOf(bob)).toBe(1.01);
  });
});
