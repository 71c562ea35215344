/**
 * `value` as one flat string, for a string built by concatenation that is
 * kept for a long time. V8 keeps the result of `a + b` as a cell pointing at
 * both pieces until something needs the characters in one piece, and nothing
 * ever does for a value that is only stored and compared by reference:
 * `crypto.randomUUID()` concatenates 20 pieces, and kept as built a UUID is
 * about 480 bytes of cells instead of one 56-byte string (a heap snapshot
 * after a storm of 1,000 held 21,000 such cells, most of them generations'
 * UUIDs and socket identities).
 *
 * `trim()` flattens its receiver and, with nothing to trim, returns the flat
 * string itself. With white space at either end the value is returned as it
 * came: this never changes a string.
 */
export function flatString(value: string): string {
  const flat = value.trim();
  return flat.length === value.length ? flat : value;
}
