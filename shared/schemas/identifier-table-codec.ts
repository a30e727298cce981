/**
 * How `identifier-table.generated.ts` writes its lists of numbers: one string of base-32 digits,
 * most significant first, each number's last digit from the first half of {@link DIGITS} and the
 * others from the second half, so numbers need no separator. The table is a few thousand small
 * numbers (run lengths, values): as a string it is a third of the bytes of number literals, costs a
 * cold start one string literal to parse, and is decoded on first use, which only an address
 * outside visible ASCII makes (`identifier-profile.ts`).
 */
const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_';
const BASE = 32;

/** `numbers` (non-negative safe integers) as one string. */
export function encodeNumbers(numbers: readonly number[]): string {
  let text = '';
  for (const number of numbers) {
    if (!Number.isSafeInteger(number) || number < 0) throw new Error(`Cannot encode ${number}`);
    let digits = DIGITS[number % BASE] as string;
    for (let rest = Math.floor(number / BASE); rest > 0; rest = Math.floor(rest / BASE)) {
      digits = (DIGITS[BASE + (rest % BASE)] as string) + digits;
    }
    text += digits;
  }
  return text;
}

/** The numbers {@link encodeNumbers} wrote. */
export function decodeNumbers(text: string): number[] {
  const numbers: number[] = [];
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const digit = DIGITS.indexOf(text[i] as string);
    if (digit < 0) throw new Error(`Not a digit of the identifier table: ${text[i]}`);
    value = value * BASE + (digit % BASE);
    if (digit < BASE) {
      numbers.push(value);
      value = 0;
    }
  }
  if (value !== 0) throw new Error('The identifier table ends inside a number');
  return numbers;
}
