import { ASCII_PROTOTYPES, PROTOTYPES, SOURCES } from './confusables-table.generated.ts';
import { decodeNumbers } from './identifier-table-codec.ts';

/*
 * UTS #39 §4's skeleton of an address: two addresses whose skeletons are equal look alike (`pace7`
 * and `расе7` in Cyrillic, `paypal` and `paypa1`), and only one wallet may hold a skeleton
 * (shared/wallet/dynamodb/wallet-opening.ts). Why and its limits: docs/decisions/address-profile.md.
 */

let prototypes: Map<number, string> | undefined;

/** The table, decoded on the first address outside printable ASCII an execution environment sees. */
function table(): Map<number, string> {
  if (prototypes) return prototypes;
  const list = decodeNumbers(PROTOTYPES);
  const targets: string[] = [];
  for (let i = 0; i < list.length; ) {
    const length = list[i] as number;
    targets.push(String.fromCodePoint(...list.slice(i + 1, i + 1 + length)));
    i += 1 + length;
  }
  const sources = decodeNumbers(SOURCES);
  const decoded = new Map<number, string>();
  for (let i = 0, source = 0; i < sources.length; i += 2) {
    source += sources[i] as number;
    decoded.set(source, targets[sources[i + 1] as number] as string);
  }
  prototypes = decoded;
  return decoded;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;

/**
 * `skeleton(X)` of UTS #39 §4: X in NFD, without its default-ignorable code points, each code point
 * replaced by its prototype in confusables.txt, in NFD again.
 */
export function skeleton(text: string): string {
  const nfd = text.normalize('NFD');
  let out = '';
  if (PRINTABLE_ASCII.test(nfd)) {
    for (const c of nfd) out += ASCII_PROTOTYPES[c] ?? c;
  } else {
    const map = table();
    for (const c of nfd) {
      if (DEFAULT_IGNORABLE.test(c)) continue;
      out += map.get(c.codePointAt(0) as number) ?? c;
    }
  }
  return out.normalize('NFD');
}
