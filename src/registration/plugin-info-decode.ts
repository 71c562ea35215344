/**
 * The GetInfo reply (pluginregistration.PluginInfo) decoded in one pass over
 * the wire, with the wire checks of plugin-info-bounds.ts on the way.
 *
 * Why by hand: the message has four string fields, and protobuf-es's generic
 * reader (a reflective walk, a BinaryReader per message) plus the separate
 * UTF-8 pass cost more per registration in a storm than the rest of the
 * reply's handling together. What protobuf does is kept: fields in any order,
 * the last of a repeated scalar wins, unknown fields (and a known number with
 * another wire type, as Go's protobuf treats it) are skipped, and a string
 * that is not valid UTF-8 fails the decode, as Go's protobuf fails it.
 */
import { isUtf8 } from 'node:buffer';
import { BerthError } from '../common/index.js';
import { PLUGIN_INFO_LIMITS } from './plugin-info-bounds.js';
import type { RegistrationInfo } from './types.js';

const FIELD_NAMES = ['', 'type', 'name', 'endpoint', 'supported_versions'] as const;

/** Throws BERTH_PLUGIN_INFO_INVALID naming the fault (too large, a bad string, a truncated or malformed message). */
export function decodePluginInfo(bytes: Uint8Array): RegistrationInfo {
  if (bytes.byteLength > PLUGIN_INFO_LIMITS.messageBytes) {
    throw invalid(`GetInfo reply is ${bytes.byteLength} bytes, more than ${PLUGIN_INFO_LIMITS.messageBytes}`);
  }
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const info: RegistrationInfo = { type: '', name: '', endpoint: '', supportedVersions: [] };
  let at = 0;
  while (at < buffer.length) {
    const tag = readVarint(buffer, at);
    at = tag.next;
    const field = Math.floor(tag.value / 8);
    const wireType = tag.value % 8;
    if (field === 0) throw invalid('GetInfo reply has a field numbered 0');
    if (wireType === 2) {
      const length = readVarint(buffer, at);
      const end = length.next + length.value;
      if (end > buffer.length) throw invalid('GetInfo reply ends inside a field');
      at = end;
      if (field > 4) continue;
      const raw = buffer.subarray(length.next, end);
      if (!isUtf8(raw)) throw invalid(`GetInfo reply field ${FIELD_NAMES[field]} is not valid UTF-8`);
      const text = raw.toString('utf8');
      if (field === 1) info.type = text;
      else if (field === 2) info.name = text;
      else if (field === 3) info.endpoint = text;
      else info.supportedVersions.push(text);
      continue;
    }
    at = skip(buffer, at, wireType);
  }
  return info;
}

function readVarint(buffer: Buffer, at: number): { value: number; next: number } {
  let value = 0;
  let scale = 1;
  for (let i = at; i < buffer.length && i < at + 10; i++) {
    const byte = buffer[i] as number;
    // Beyond 2^53 the value is no length or tag we could honour; it is refused below.
    value += (byte & 0x7f) * scale;
    scale *= 128;
    if ((byte & 0x80) === 0) {
      if (!Number.isSafeInteger(value)) throw invalid('GetInfo reply holds a varint too large to use');
      return { value, next: i + 1 };
    }
  }
  throw invalid('GetInfo reply ends inside a varint');
}

/** Past one unknown field's value. */
function skip(buffer: Buffer, at: number, wireType: number): number {
  switch (wireType) {
    case 0:
      return readVarint(buffer, at).next;
    case 1:
      return bounded(buffer, at + 8);
    case 5:
      return bounded(buffer, at + 4);
    default:
      // Groups (3, 4) are proto2 only; 6 and 7 do not exist.
      throw invalid(`GetInfo reply has a field of wire type ${wireType}, which PluginInfo cannot hold`);
  }
}

function bounded(buffer: Buffer, end: number): number {
  if (end > buffer.length) throw invalid('GetInfo reply ends inside a field');
  return end;
}

function invalid(message: string): BerthError {
  return new BerthError('BERTH_PLUGIN_INFO_INVALID', message);
}
