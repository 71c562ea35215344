/**
 * HPACK's Huffman code (RFC 7541 Appendix B). The code is canonical, so the
 * table below holds only each symbol's code length (symbols 0-255, then EOS
 * as 256); the codes themselves are derived here by the canonical rule:
 * shorter codes first, ties in symbol order, each code one more than the
 * previous, shifted left when the length grows.
 */

// biome-ignore format: a 16-per-row table reads like the RFC's.
const CODE_LENGTHS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  30,];
const EOS = 256;
const MAX_CODE_LENGTH = 30;

interface CanonicalTable {
  /** Symbols sorted by (length, symbol). */
  symbols: Uint16Array;
  /** Per length: the first code of that length, and how many codes have it. */
  firstCode: Int32Array;
  count: Int32Array;
  /** Per length: the index in `symbols` of its first code. */
  offset: Int32Array;
  /** Per symbol: its code and length (for the encoder the tests use). */
  codes: Uint32Array;
}

function buildTable(): CanonicalTable {
  const symbols = Uint16Array.from(
    CODE_LENGTHS.map((_, s) => s).sort((a, b) => (CODE_LENGTHS[a] ?? 0) - (CODE_LENGTHS[b] ?? 0) || a - b),
  );
  const firstCode = new Int32Array(MAX_CODE_LENGTH + 1);
  const count = new Int32Array(MAX_CODE_LENGTH + 1);
  const offset = new Int32Array(MAX_CODE_LENGTH + 1);
  const codes = new Uint32Array(CODE_LENGTHS.length);
  let code = 0;
  let length = CODE_LENGTHS[symbols[0] ?? 0] ?? 0;
  for (let i = 0; i < symbols.length; i++) {
    const symbol = symbols[i] ?? 0;
    const len = CODE_LENGTHS[symbol] ?? 0;
    if (i > 0) {
      code = (code + 1) * 2 ** (len - length);
      length = len;
    }
    if (count[len] === 0) {
      firstCode[len] = code;
      offset[len] = i;
    }
    count[len] = (count[len] ?? 0) + 1;
    codes[symbol] = code;
  }
  return { symbols, firstCode, count, offset, codes };
}

const TABLE = buildTable();

export class HuffmanError extends Error {}

/**
 * Decodes a Huffman-coded string into latin1 (one char per octet). Refuses
 * the EOS symbol, padding longer than 7 bits, and padding that is not the
 * most significant bits of EOS (all ones), as RFC 7541 section 5.2 requires.
 */
export function huffmanDecode(input: Uint8Array): string {
  const out: number[] = [];
  let code = 0;
  let length = 0;
  let onesOnly = true;
  for (const byte of input) {
    for (let bit = 7; bit >= 0; bit--) {
      const b = (byte >> bit) & 1;
      code = code * 2 + b;
      length += 1;
      onesOnly &&= b === 1;
      const index = code - (TABLE.firstCode[length] ?? 0);
      if (index >= 0 && index < (TABLE.count[length] ?? 0)) {
        const symbol = TABLE.symbols[(TABLE.offset[length] ?? 0) + index] ?? EOS;
        if (symbol === EOS) throw new HuffmanError('Huffman string contains the EOS symbol');
        out.push(symbol);
        code = 0;
        length = 0;
        onesOnly = true;
      } else if (length >= MAX_CODE_LENGTH) {
        throw new HuffmanError('Huffman string holds a code that is not in the table');
      }
    }
  }
  if (length > 7) throw new HuffmanError(`Huffman string ends with ${length} bits of padding (at most 7)`);
  if (!onesOnly) throw new HuffmanError('Huffman padding is not a prefix of EOS');
  return Buffer.from(out).toString('latin1');
}

/** Huffman-codes a latin1 string (used by tests to build header blocks a real client would send). */
export function huffmanEncode(text: string): Buffer {
  const bytes: number[] = [];
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < text.length; i++) {
    const symbol = text.charCodeAt(i) & 0xff;
    const len = CODE_LENGTHS[symbol] ?? 0;
    const code = TABLE.codes[symbol] ?? 0;
    for (let bit = len - 1; bit >= 0; bit--) {
      acc = (acc << 1) | (Math.floor(code / 2 ** bit) & 1);
      bits += 1;
      if (bits === 8) {
        bytes.push(acc);
        acc = 0;
        bits = 0;
      }
    }
  }
  if (bits > 0) bytes.push(((acc << (8 - bits)) | ((1 << (8 - bits)) - 1)) & 0xff);
  return Buffer.from(bytes);
}
