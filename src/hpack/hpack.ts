/**
 * Just enough of HPACK (RFC 7541) to follow a client's header blocks: the
 * decoder keeps the same dynamic table the server's decoder keeps, and
 * reports every field with its representation and its byte range, so a
 * block can be re-emitted with one field changed and the rest copied.
 * Strings are latin1 (one char per octet), so lengths are octet counts.
 */
import { HuffmanError, huffmanDecode } from './huffman.js';

export class HpackError extends Error {}

/** RFC 7541 Appendix A; index 1 is the first entry. */
const STATIC_TABLE: ReadonlyArray<readonly [string, string]> = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];
export const STATIC_TABLE_SIZE = STATIC_TABLE.length;
/** The static index of `:authority` (its value there is empty). */
export const AUTHORITY_INDEX = 1;
/** The dynamic table size both ends start from (SETTINGS_HEADER_TABLE_SIZE's initial value). */
export const INITIAL_TABLE_SIZE = 4096;
const ENTRY_OVERHEAD = 32;
/** Larger integers than this are garbage in any header block we accept. */
const MAX_INTEGER = 0x7fff_ffff;

export type Representation = 'indexed' | 'incremental' | 'without-indexing' | 'never-indexed' | 'size-update';

export interface DecodedField {
  representation: Representation;
  /** The field's bytes in the block: [start, end). */
  start: number;
  end: number;
  /** For literals: the table index the name came from (0 for a literal name). */
  nameIndex: number;
  name: string;
  value: string;
}

interface Entry {
  name: string;
  value: string;
}

/** The dynamic table, newest entry first (RFC 7541 section 4). */
export class DynamicTable {
  readonly #entries: Entry[] = [];
  #size = 0;
  #maxSize: number;

  constructor(maxSize = INITIAL_TABLE_SIZE) {
    this.#maxSize = maxSize;
  }

  get size(): number {
    return this.#size;
  }

  get length(): number {
    return this.#entries.length;
  }

  get maxSize(): number {
    return this.#maxSize;
  }

  /** Entry by HPACK index (static first, then dynamic); throws on an index outside both. */
  get(index: number): Entry {
    if (index >= 1 && index <= STATIC_TABLE_SIZE) {
      const [name, value] = STATIC_TABLE[index - 1] ?? ['', ''];
      return { name, value };
    }
    const entry = this.#entries[index - STATIC_TABLE_SIZE - 1];
    if (index < 1 || entry === undefined) {
      throw new HpackError(
        `header index ${index} is outside the tables (${STATIC_TABLE_SIZE} static, ${this.#entries.length} dynamic)`,
      );
    }
    return entry;
  }

  add(name: string, value: string): void {
    const size = name.length + value.length + ENTRY_OVERHEAD;
    this.#evictTo(this.#maxSize - size);
    if (size <= this.#maxSize) {
      this.#entries.unshift({ name, value });
      this.#size += size;
    }
  }

  resize(maxSize: number): void {
    this.#maxSize = maxSize;
    this.#evictTo(maxSize);
  }

  #evictTo(limit: number): void {
    while (this.#size > Math.max(limit, 0)) {
      const old = this.#entries.pop();
      if (old === undefined) break;
      this.#size -= old.name.length + old.value.length + ENTRY_OVERHEAD;
    }
  }
}

/** Reads an HPACK integer with an N-bit prefix (RFC 7541 section 5.1). */
function readInteger(block: Uint8Array, at: number, prefixBits: number): { value: number; next: number } {
  const mask = (1 << prefixBits) - 1;
  const first = block[at];
  if (first === undefined) throw new HpackError('header block ends inside an integer');
  let value = first & mask;
  let pos = at + 1;
  if (value < mask) return { value, next: pos };
  let shift = 0;
  while (true) {
    const byte = block[pos];
    if (byte === undefined) throw new HpackError('header block ends inside an integer');
    pos += 1;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (value > MAX_INTEGER || shift > 35) throw new HpackError('header block holds an integer over 2^31');
    if ((byte & 0x80) === 0) return { value, next: pos };
  }
}

function readString(block: Uint8Array, at: number): { value: string; next: number } {
  const huffman = ((block[at] ?? 0) & 0x80) !== 0;
  const { value: length, next } = readInteger(block, at, 7);
  const end = next + length;
  if (end > block.length) throw new HpackError(`header string of ${length} bytes runs past the block`);
  try {
    const value = huffman ? memoHuffmanDecode(block, next, end) : latin1(block, next, end);
    return { value, next: end };
  } catch (err) {
    if (err instanceof HuffmanError) throw new HpackError(err.message);
    throw err;
  }
}

/**
 * Decoded Huffman strings, by their coded octets. A plugin's replies repeat a
 * few values on every new connection, and the peer's encoder codes them
 * afresh on each (its dynamic table is per connection): grpc-go's
 * "application/grpc", "grpc-status", "0". A start with 1,000 plugins decoded
 * them bit by bit 1,000 times, about 30 ms of its CPU profile; a lookup is a
 * short latin1 key and a Map get. Bounded: only strings of at most
 * `codedBytes`, and the memo is emptied when it holds `entries`, so a peer
 * that sends ever-new values costs a lookup each and a few KB at most.
 */
export const HUFFMAN_MEMO_LIMITS = Object.freeze({ codedBytes: 48, entries: 256 });

const huffmanMemo = new Map<string, string>();

function memoHuffmanDecode(block: Uint8Array, start: number, end: number): string {
  if (end - start > HUFFMAN_MEMO_LIMITS.codedBytes) return huffmanDecode(block.subarray(start, end));
  const key = latin1(block, start, end);
  const known = huffmanMemo.get(key);
  if (known !== undefined) return known;
  // A string that does not decode throws here, every time: only decoded values are kept.
  const value = huffmanDecode(block.subarray(start, end));
  if (huffmanMemo.size >= HUFFMAN_MEMO_LIMITS.entries) huffmanMemo.clear();
  huffmanMemo.set(key, value);
  return value;
}

/** The octets [start, end) of `block` as a latin1 string, without copying them first. */
function latin1(block: Uint8Array, start: number, end: number): string {
  const buffer = Buffer.isBuffer(block)
    ? block
    : Buffer.from(block.buffer, block.byteOffset, block.byteLength);
  return buffer.toString('latin1', start, end);
}

/**
 * Decodes a whole header block, updating `table` exactly as the peer's
 * decoder does (`tableValue` may swap an added entry's value for one of the
 * same length: what the peer's table will hold after a rewrite). Throws HpackError on anything RFC 7541 calls a decoding
 * error (the connection is then unusable: the tables cannot be trusted).
 */
export function decodeBlock(
  block: Uint8Array,
  table: DynamicTable,
  maxTableSize: number,
  tableValue: (name: string, value: string) => string = (_name, value) => value,
): DecodedField[] {
  const fields: DecodedField[] = [];
  let pos = 0;
  let seenField = false;
  while (pos < block.length) {
    const start = pos;
    const byte = block[pos] ?? 0;
    if (byte & 0x80) {
      const { value: index, next } = readInteger(block, pos, 7);
      if (index === 0) throw new HpackError('indexed header field with index 0');
      const entry = table.get(index);
      fields.push({ representation: 'indexed', start, end: next, nameIndex: index, ...entry });
      pos = next;
      seenField = true;
      continue;
    }
    if ((byte & 0xe0) === 0x20) {
      // A size update is allowed only before the first field of a block.
      if (seenField) throw new HpackError('dynamic table size update after a header field');
      const { value: size, next } = readInteger(block, pos, 5);
      if (size > maxTableSize) {
        throw new HpackError(`dynamic table size update to ${size} exceeds the limit ${maxTableSize}`);
      }
      table.resize(size);
      fields.push({ representation: 'size-update', start, end: next, nameIndex: 0, name: '', value: '' });
      pos = next;
      continue;
    }
    const representation: Representation =
      (byte & 0xc0) === 0x40 ? 'incremental' : (byte & 0xf0) === 0x10 ? 'never-indexed' : 'without-indexing';
    const prefix = representation === 'incremental' ? 6 : 4;
    const { value: nameIndex, next: afterIndex } = readInteger(block, pos, prefix);
    let name: string;
    pos = afterIndex;
    if (nameIndex === 0) {
      const literal = readString(block, pos);
      name = literal.value;
      pos = literal.next;
    } else {
      name = table.get(nameIndex).name;
    }
    const value = readString(block, pos);
    pos = value.next;
    if (representation === 'incremental') table.add(name, tableValue(name, value.value));
    fields.push({ representation, start, end: pos, nameIndex, name, value: value.value });
    seenField = true;
  }
  return fields;
}

/** Writes an HPACK integer with an N-bit prefix, the high bits of the first byte set to `flags`. */
export function encodeInteger(value: number, prefixBits: number, flags: number): number[] {
  const mask = (1 << prefixBits) - 1;
  if (value < mask) return [flags | value];
  const out = [flags | mask];
  let rest = value - mask;
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
  return out;
}

function encodeRawString(text: string): number[] {
  return [...encodeInteger(text.length, 7, 0), ...Buffer.from(text, 'latin1')];
}

/**
 * A literal field with the given representation: the name by table index
 * when `nameIndex` > 0 (else as a literal), the value as a plain (not
 * Huffman-coded) string.
 */
export function encodeLiteral(
  representation: 'incremental' | 'without-indexing' | 'never-indexed',
  nameIndex: number,
  name: string,
  value: string,
): Buffer {
  const [prefix, flags] =
    representation === 'incremental' ? [6, 0x40] : representation === 'never-indexed' ? [4, 0x10] : [4, 0];
  const out = encodeInteger(nameIndex, prefix, flags);
  if (nameIndex === 0) out.push(...encodeRawString(name));
  out.push(...encodeRawString(value));
  return Buffer.from(out);
}
