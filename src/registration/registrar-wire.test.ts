import assert from 'node:assert/strict';
import { test } from 'node:test';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  InfoRequestSchema,
  RegistrationStatusResponseSchema,
  RegistrationStatusSchema,
} from './gen/pluginregistration/api_pb.js';
import {
  checkStatusResponse,
  EMPTY_INFO_REQUEST,
  encodeRegistrationStatus,
  GET_INFO_PATH,
  NOTIFY_PATH,
} from './registrar-wire.js';
import { registrationMethods } from './wire.js';

test('the registrar encodes its requests as protobuf-es does, and names the methods as the descriptor does', () => {
  assert.deepEqual(EMPTY_INFO_REQUEST, toBinary(InfoRequestSchema, create(InfoRequestSchema)));
  const errors = [
    '',
    'x',
    'refused: no handler for type Foo',
    'é ü ✓ 🙂',
    'e'.repeat(127),
    'e'.repeat(128),
    'e'.repeat(20_000),
  ];
  for (const pluginRegistered of [true, false]) {
    for (const error of errors) {
      assert.deepEqual(
        encodeRegistrationStatus({ pluginRegistered, error }),
        toBinary(RegistrationStatusSchema, create(RegistrationStatusSchema, { pluginRegistered, error })),
        `pluginRegistered ${pluginRegistered}, error of ${error.length} chars`,
      );
    }
  }
  assert.equal(GET_INFO_PATH, registrationMethods.getInfo.path);
  assert.equal(NOTIFY_PATH, registrationMethods.notifyRegistrationStatus.path);
});

test('a NotifyRegistrationStatus reply is accepted when protobuf-es accepts it, and refused when malformed', () => {
  const accepted = [
    [],
    [0x08, 0x01], // an unknown varint field
    [0x12, 0x03, 0x61, 0x62, 0x63], // an unknown string field
    [0x19, 1, 2, 3, 4, 5, 6, 7, 8], // fixed64
    [0x25, 1, 2, 3, 4], // fixed32
    [0x08, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x00],
  ];
  for (const bytes of accepted) {
    const message = Uint8Array.from(bytes);
    assert.doesNotThrow(() => fromBinary(RegistrationStatusResponseSchema, message), `protobuf-es: ${bytes}`);
    assert.doesNotThrow(() => checkStatusResponse(message), String(bytes));
  }
  const refused: Array<[number[], RegExp]> = [
    [[0x08], /ends inside a varint/],
    [[0x08, 0x80], /ends inside a varint/],
    [[0x12, 0x05, 0x61], /ends inside a field/],
    [[0x19, 1, 2], /ends inside a field/],
    [[0x00, 0x01], /field numbered 0/],
    [[0x0e], /wire type 6/],
  ];
  for (const [bytes, why] of refused) {
    const message = Uint8Array.from(bytes);
    assert.throws(
      () => fromBinary(RegistrationStatusResponseSchema, message),
      `protobuf-es refuses ${bytes} too`,
    );
    assert.throws(() => checkStatusResponse(message), why);
  }
});
