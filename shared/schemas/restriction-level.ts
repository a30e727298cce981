/**
 * UTS #39 §5.2, Highly Restrictive: the script sets besides one script that an identifier may
 * cover. Read by the identifier profile, and by the table's generator, which numbers these scripts
 * by name (`COVERED_SCRIPTS`) and every other only by number.
 */
export const HIGHLY_RESTRICTIVE_COVERS = [
  ['Latin', 'Han', 'Hiragana', 'Katakana'],
  ['Latin', 'Han', 'Bopomofo'],
  ['Latin', 'Han', 'Hangul'],
] as const;
