/**
 * Stored data that is present but cannot be used (a row that does not decode,
 * a broken schema marker). The SQLite storage treats it like a damaged file:
 * set aside, reported, start empty.
 */
export class CorruptStateError extends Error {
  override readonly name = 'CorruptStateError';
}
