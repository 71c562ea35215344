/**
 * HPACK pieces against RFC 7541's own examples (Appendix C): Huffman codes,
 * integers, and a dynamic table followed across three requests.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DynamicTable,
  decodeBlock,
  encodeInteger,
  HpackError,
  HUFFMAN_MEMO_LIMITS,
  STATIC_TABLE_SIZE,
} from './hpack.js';
import { HuffmanError, huffmanDecode, huffmanEncode } from './huffman.js';

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex');

describe('huffman', () => {
  it('decodes and encodes the RFC 7541 C.4 strings', () => {
    const cases: Array<[string, string]> = [
      ['www.example.com', 'f1e3 c2e5 f23a 6ba0 ab90 f4ff'],
      ['no-cache', 'a8eb 1064 9cbf'],
      ['custom-key', '25a8 49e9 5ba9 7d7f'],
      ['custom-value', '25a8 49e9 5bb8 e8b4 bf'],
    ];
    for (const [text, code] of cases) {
      assert.equal(huffmanDecode(hex(code)), text);
      assert.deepEqual(huffmanEncode(text), hex(code));
    }
  });

  it('round-trips every octet, including the 30-bit codes', () => {
    const all = String.fromCharCode(...Array.from({ length: 256 }, (_, i) => i));
    assert.equal(huffmanDecode(huffmanEncode(all)), all);
    assert.equal(
      huffmanDecode(huffmanEncode('/var/lib/kubelet/device-plugins/kubelet.sock')),
      '/var/lib/kubelet/device-plugins/kubelet.sock',
    );
  });

  it('refuses padding that is too long or not all ones, and the EOS symbol', () => {
    // 'a' is 00011 (5 bits): padded with three ones is fine, with zeros not.
    assert.equal(huffmanDecode(Buffer.from([0b00011111])), 'a');
    assert.throws(() => huffmanDecode(Buffer.from([0b00011000])), HuffmanError);
    // A whole byte of ones after a symbol is 8 bits of padding.
    assert.throws(() => huffmanDecode(Buffer.from([0b00011111, 0xff])), /padding/);
    // EOS: 30 ones.
    assert.throws(() => huffmanDecode(Buffer.from([0xff, 0xff, 0xff, 0xfc])), /EOS/);
  });
});

describe('hpack', () => {
  it('has the 61 static entries of RFC 7541 Appendix A', () => {
    const table = new DynamicTable();
    assert.equal(STATIC_TABLE_SIZE, 61);
    assert.deepEqual(table.get(1), { name: ':authority', value: '' });
    assert.deepEqual(table.get(16), { name: 'accept-encoding', value: 'gzip, deflate' });
    assert.deepEqual(table.get(38), { name: 'host', value: '' });
    assert.deepEqual(table.get(59), { name: 'vary', value: '' });
    assert.deepEqual(table.get(61), { name: 'www-authenticate', value: '' });
  });

  it('encodes integers as in RFC 7541 C.1', () => {
    assert.deepEqual(encodeInteger(10, 5, 0), [10]);
    assert.deepEqual(encodeInteger(1337, 5, 0), [31, 154, 10]);
    assert.deepEqual(encodeInteger(42, 8, 0), [42]);
  });

  it('decodes repeated Huffman strings the same every time, past the memo of decoded ones', () => {
    // A literal without indexing, new name: both strings Huffman-coded.
    const literal = (name: string, value: string) => {
      const n = huffmanEncode(name);
      const v = huffmanEncode(value);
      return Buffer.from([0x00, 0x80 | n.length, ...n, 0x80 | v.length, ...v]);
    };
    const decode = (block: Buffer) =>
      decodeBlock(block, new DynamicTable(), 4096).map((f) => [f.name, f.value]);
    const count = HUFFMAN_MEMO_LIMITS.entries * 3;
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < count; i++) {
        assert.deepEqual(decode(literal('grpc-status', `${i}`)), [['grpc-status', `${i}`]]);
      }
    }
    // Longer than the memo keeps: decoded each time, all the same.
    const long = 'application/grpc+proto; charset=utf-8; a long value past the memo bound';
    assert.ok(huffmanEncode(long).length > HUFFMAN_MEMO_LIMITS.codedBytes);
    assert.deepEqual(decode(literal('content-type', long)), [['content-type', long]]);
    assert.deepEqual(decode(literal('content-type', long)), [['content-type', long]]);
  });

  it('refuses a string that does not decode every time it comes (no memo of failures)', () => {
    // 'a' (00011) padded with zeros: padding that is not a prefix of EOS.
    const bad = Buffer.from([0x00, 0x81, 0b00011000, 0x81, 0b00011111]);
    for (let i = 0; i < 2; i++) {
      assert.throws(() => decodeBlock(bad, new DynamicTable(), 4096), HpackError);
    }
  });

  it('follows the dynamic table across the three requests of RFC 7541 C.4 (Huffman)', () => {
    const table = new DynamicTable();
    const first = decodeBlock(hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff'), table, 4096);
    assert.deepEqual(
      first.map((f) => [f.representation, f.name, f.value]),
      [
        ['indexed', ':method', 'GET'],
        ['indexed', ':scheme', 'http'],
        ['indexed', ':path', '/'],
        ['incremental', ':authority', 'www.example.com'],
      ],
    );
    assert.equal(table.size, 57);
    decodeBlock(hex('8286 84be 5886 a8eb 1064 9cbf'), table, 4096);
    assert.equal(table.size, 110);
    const third = decodeBlock(
      hex('8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf'),
      table,
      4096,
    );
    assert.deepEqual(
      third.map((f) => [f.name, f.value]),
      [
        [':method', 'GET'],
        [':scheme', 'https'],
        [':path', '/index.html'],
        [':authority', 'www.example.com'],
        ['custom-key', 'custom-value'],
      ],
    );
    assert.equal(table.size, 164);
    assert.equal(table.get(62).name, 'custom-key');
  });

  it('evicts as RFC 7541 C.5 does with a 256-byte table', () => {
    const table = new DynamicTable(256);
    const block = (text: string) => decodeBlock(hex(text), table, 4096);
    block(
      '4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
    );
    assert.equal(table.size, 222);
    block('4803 3330 37c1 c0bf');
    assert.equal(table.size, 222);
    assert.equal(table.get(62).value, '307');
    assert.equal(table.length, 4);
  });

  it('refuses garbage: index 0, an index past the tables, a string past the block, a late size update, a huge integer', () => {
    const table = new DynamicTable();
    assert.throws(() => decodeBlock(hex('80'), table, 4096), HpackError);
    assert.throws(() => decodeBlock(hex('be'), table, 4096), /outside the tables/);
    assert.throws(() => decodeBlock(hex('4005 6162'), table, 4096), /runs past the block/);
    assert.throws(() => decodeBlock(hex('82 3f e1 1f'), table, 4096), /size update after/);
    assert.throws(() => decodeBlock(hex('3f e1 ff'), table, 4096), HpackError);
    assert.throws(() => decodeBlock(hex('7f ff ff ff ff ff ff 01'), table, 4096), /2\^31/);
    assert.throws(() => decodeBlock(hex('3f e1 ff 03'), table, 4096), /exceeds the limit/);
  });
});
