import assert from 'node:assert/strict';
import { test } from 'node:test';
import { create, toBinary } from '@bufbuild/protobuf';
import { isBerthError } from '../common/index.js';
import { PluginInfoSchema } from './gen/pluginregistration/api_pb.js';
import { decodePluginInfo } from './plugin-info-decode.js';

const encode = (info: { type?: string; name?: string; endpoint?: string; supportedVersions?: string[] }) =>
  toBinary(PluginInfoSchema, create(PluginInfoSchema, info));

/** A length-delimited field by hand: tag, length, bytes. */
const field = (number: number, bytes: number[]) => [(number << 3) | 2, bytes.length, ...bytes];
const refusedWith = (text: RegExp) => (err: unknown) =>
  isBerthError(err, 'BERTH_PLUGIN_INFO_INVALID') && text.test((err as Error).message);

test('decodes what protobuf-es encodes, field for field, unicode included', () => {
  const cases = [
    {},
    {
      type: 'CSIPlugin',
      name: 'csi.example.com',
      endpoint: '/var/lib/kubelet/plugins/x/csi.sock',
      supportedVersions: ['1.0.0', 'v1'],
    },
    { type: 'DRAPlugin', name: 'gpu.example.com', supportedVersions: ['v1.DRAPlugin'] },
    { type: 'Ünïcödé', name: '名前-🙂', endpoint: '', supportedVersions: ['', 'x'.repeat(200)] },
  ];
  for (const info of cases) {
    assert.deepEqual(decodePluginInfo(encode(info)), {
      type: info.type ?? '',
      name: info.name ?? '',
      endpoint: info.endpoint ?? '',
      supportedVersions: info.supportedVersions ?? [],
    });
  }
});

test('unknown fields of every wire type, and a known number with another wire type, are skipped; the last scalar wins', () => {
  const bytes = Uint8Array.from([
    ...field(2, [0x61]), // name "a"
    0x28,
    0x96,
    0x01, // field 5, varint 150
    0x31,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8, // field 6, fixed64
    0x3d,
    1,
    2,
    3,
    4, // field 7, fixed32
    ...field(9, [1, 2, 3]), // field 9, bytes
    0x08,
    0x01, // field 1 (type) as a varint: not a string, skipped as Go's protobuf does
    ...field(2, [0x62]), // name "b": the last one wins
    ...field(4, [0x76, 0x31]),
    ...field(4, [0x76, 0x32]),
  ]);
  assert.deepEqual(decodePluginInfo(bytes), {
    type: '',
    name: 'b',
    endpoint: '',
    supportedVersions: ['v1', 'v2'],
  });
});

test('invalid UTF-8 fails naming the field, as Go refuses it', () => {
  assert.throws(
    () => decodePluginInfo(Uint8Array.from(field(2, [0xff, 0xfe]))),
    refusedWith(/field name is not valid UTF-8/),
  );
  assert.throws(
    () => decodePluginInfo(Uint8Array.from([...field(1, [0x41]), ...field(4, [0xc3])])),
    refusedWith(/field supported_versions is not valid UTF-8/),
  );
});

test('truncated and malformed messages fail with a reason, never a wrong decode', () => {
  const cases: Array<[number[], RegExp]> = [
    [[0x12, 5, 0x61], /ends inside a field/],
    [[0x12], /ends inside a varint/],
    [[0x28, 0x80], /ends inside a varint/],
    [[0x31, 1, 2], /ends inside a field/],
    [[0x0b], /wire type 3/],
    [[0x02, 0], /numbered 0/],
    [[0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], /too large|ends inside a field/],
  ];
  for (const [bytes, text] of cases)
    assert.throws(() => decodePluginInfo(Uint8Array.from(bytes)), refusedWith(text), String(bytes));
});

test('a reply over the message bound is refused before decoding', () => {
  const big = encode({ name: 'n'.repeat(70 * 1024) });
  assert.throws(() => decodePluginInfo(big), refusedWith(/more than 65536/));
});
