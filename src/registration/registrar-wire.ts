/**
 * What the registrar sends, encoded by hand: the handshake path loads
 * neither protobuf-es nor the generated descriptors (plugin-info-decode.ts
 * decodes the reply the same way). Byte-for-byte what protobuf-es writes
 * (registrar-wire.test.ts compares them): proto3 leaves default values out,
 * so an empty InfoRequest is no bytes and a success is two.
 */
import { readVarint, skipField } from './protobuf-walk.js';
import type { RegistrationStatus } from './types.js';

/** pluginregistration.Registration's two methods, as HTTP/2 `:path`s (wire.ts builds the same from the descriptor). */
export const GET_INFO_PATH = '/pluginregistration.Registration/GetInfo';
export const NOTIFY_PATH = '/pluginregistration.Registration/NotifyRegistrationStatus';

/** InfoRequest has no fields. */
export const EMPTY_INFO_REQUEST = new Uint8Array(0);

/** RegistrationStatus { bool plugin_registered = 1; string error = 2; }. */
const REGISTERED = Uint8Array.of(0x08, 0x01);

export function encodeRegistrationStatus(status: RegistrationStatus): Uint8Array {
  if (status.pluginRegistered && status.error === '') return REGISTERED;
  const error = Buffer.from(status.error, 'utf8');
  const parts: number[] = status.pluginRegistered ? [0x08, 0x01] : [];
  if (error.length > 0) {
    parts.push(0x12);
    // A varint length: 7 bits a byte, low bits first.
    let length = error.length;
    while (length > 0x7f) {
      parts.push((length & 0x7f) | 0x80);
      length >>>= 7;
    }
    parts.push(length);
  }
  const out = new Uint8Array(parts.length + error.length);
  out.set(parts, 0);
  out.set(error, parts.length);
  return out;
}

/**
 * Checks a NotifyRegistrationStatus reply (RegistrationStatusResponse, no
 * fields): any well-formed fields are skipped, as protobuf does; a truncated
 * or malformed message throws, naming the fault.
 */
export function checkStatusResponse(bytes: Uint8Array): void {
  let at = 0;
  while (at < bytes.length) {
    const tag = readVarint(bytes, at, malformed);
    if (tag.value < 8) throw malformed('has a field numbered 0');
    at = skipField(bytes, tag.next, tag.value % 8, malformed);
  }
}

function malformed(why: string): Error {
  return new Error(`the NotifyRegistrationStatus reply is not a valid RegistrationStatusResponse: it ${why}`);
}
