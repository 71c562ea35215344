/**
 * What the registrar sends, encoded by hand: the handshake path loads
 * neither protobuf-es nor the generated descriptors (plugin-info-decode.ts
 * decodes the reply the same way). Byte-for-byte what protobuf-es writes
 * (registrar-wire.test.ts compares them): proto3 leaves default values out,
 * so an empty InfoRequest is no bytes and a success is two.
 */
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
  const varint = (): number => {
    let value = 0;
    let scale = 1;
    for (let i = at; i < bytes.length && i < at + 10; i++) {
      const byte = bytes[i] as number;
      value += (byte & 0x7f) * scale;
      scale *= 128;
      if ((byte & 0x80) === 0) {
        at = i + 1;
        return value;
      }
    }
    throw malformed('it ends inside a varint');
  };
  while (at < bytes.length) {
    const tag = varint();
    const wireType = tag % 8;
    if (tag < 8) throw malformed('it has a field numbered 0');
    let end: number;
    if (wireType === 0) {
      varint();
      continue;
    } else if (wireType === 1) end = at + 8;
    else if (wireType === 5) end = at + 4;
    else if (wireType === 2) {
      const length = varint();
      end = at + length;
    } else throw malformed(`it has a field of wire type ${wireType}`);
    if (end > bytes.length) throw malformed('it ends inside a field');
    at = end;
  }
}

function malformed(why: string): Error {
  return new Error(`the NotifyRegistrationStatus reply is not a valid RegistrationStatusResponse: ${why}`);
}
