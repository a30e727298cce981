import { describe, expect, it } from 'vitest';
import { handler as getBalance } from '#functions/get-balance/handler.ts';
import { handler as send } from '#functions/send-money/handler.ts';
import { apiEvent, invoke, sendEvent, uniqueSub } from '../support/events.ts';
import { fund, walletLedger } from '../support/wallet.ts';

const balanceOf = async (sub: string): Promise<unknown> =>
  (await invoke(getBalance, apiEvent({ sub, scopes: ['read:wallet'], path: '/api/wallet/balance' }))).json
    .balance;

/**
 * What the wallet at `address` holds, read from the ledger: asking its balance would try to open it,
 * and a lookalike's opening is refused (issue 45.4).
 */
const heldAt = async (address: string): Promise<bigint> =>
  (await walletLedger().readWallet(address))?.balanceMinor ?? 0n;

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
  // Issue 25: each was opened as a wallet and paid instead of `dave`.
  ['a combining grapheme joiner (default-ignorable Mn)', '\u034F'],
  ['variation selector 16 (default-ignorable Mn)', '\uFE0F'],
  ['a Mongolian free variation selector (default-ignorable Mn)', '\u180B'],
  ['a Khmer inherent vowel (default-ignorable Mn)', '\u17B4'],
  ['the Hangul filler (default-ignorable Lo)', '\u3164'],
  ['the braille blank (So, renders as a space)', '\u2800'],
  ['a space', ' '],
  ['a no-break space', '\u00A0'],
  ['an ideographic space', '\u3000'],
  ['the Hangul choseong filler (conjoining jamo)', '\u115F'],
  ['the Hangul jungseong filler (conjoining jamo)', '\u1160'],
  ['the halfwidth Hangul filler (compatibility form)', '\uFFA0'],
  ['an emoji (a symbol: not an identifier character)', '\u{1F45B}'],
];

/**
 * Whole addresses that look like a plain one without an added character: the profile refuses the
 * mixed script and the compatibility form.
 */
const LOOKALIKE_ADDRESSES: readonly (readonly [string, (plain: string) => string])[] = [
  ['a Cyrillic а among Latin letters (mixed script, UTS #39)', (plain) => plain.replace('a', '\u0430')],
  ['a Greek ο among Latin letters (mixed script, UTS #39)', (plain) => plain.replace('o', '\u03BF')],
  [
    'fullwidth letters (compatibility forms, NFKC-changing)',
    (plain) => plain.replace(/[a-z]/g, (c) => String.fromCodePoint((c.codePointAt(0) as number) + 0xfee0)),
  ],
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
    expect(await heldAt(lookalike)).toBe(0n);
  });
});

describe('send money refuses an address that looks like a plain one, with 422, moving nothing', () => {
  it.each(LOOKALIKE_ADDRESSES)('%s', async (_label, lookalikeOf) => {
    const alice = uniqueSub('alice');
    await fund(alice, 100);
    const plain = uniqueSub('dave-bob');
    // The plain address holds a wallet: the lookalike must not be paid in its place, nor opened.
    await fund(plain, 1);
    const lookalike = lookalikeOf(plain);
    expect(lookalike).not.toBe(plain);
    const response = await sendAs(alice, lookalike);
    expect(response.statusCode).toBe(422);
    expect(response.json.errors).toEqual([expect.objectContaining({ pointer: '/toAddress' })]);
    expect(await balanceOf(alice)).toBe(1);
    expect(await balanceOf(plain)).toBe(0.01);
    expect(await heldAt(lookalike)).toBe(0n);
  });
});

describe('send money accepts addresses beyond ASCII that are what they look like', () => {
  it.each([
    ['an accented letter, composed (NFC)', '\u00E9'],
    ['Japanese after Latin (UTS #39 allows Latin with Han and kana)', '\u6771\u4EAC\u3072\u3089'],
    ['Hangul after Latin', '\uD55C\uAE00'],
    ['ASCII punctuation and symbols', '@+.|~'],
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

describe('send money accepts single-script addresses of other scripts', () => {
  const arabicDigits = (digits: string) =>
    digits.replace(/\d/g, (d) => String.fromCodePoint(0x0660 + Number(d)));
  it.each([
    ['Cyrillic alone', '\u0434\u0430\u0432\u0435', (digits: string) => digits],
    ['Greek alone', '\u03B4\u03B1\u03B2\u03B5', (digits: string) => digits],
    ['Hebrew, right to left, with European digits', '\u05D3\u05D5\u05D3', (digits: string) => digits],
    // European and Arabic-Indic digits together break the Bidi Rule (RFC 5893 rule 4).
    ['Arabic with its own digits', '\u062F\u0627\u0648\u062F', arabicDigits],
  ])('%s', async (_label, name, digitsOf) => {
    const alice = uniqueSub('alice');
    const bob = `${name}${digitsOf(String(Date.now()) + String(Math.random()).slice(2, 8))}`;
    await fund(alice, 100);
    await fund(bob, 1);
    const response = await sendAs(alice, bob);
    expect(response.statusCode, JSON.stringify(response.json)).toBe(200);
    expect(await balanceOf(bob)).toBe(1.01);
  });
});
