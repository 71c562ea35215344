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
import { readVarint, skipField } from './protobuf-walk.js';
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
    const tag = readVarint(buffer, at, fail);
    at = tag.next;
    const field = Math.floor(tag.value / 8);
    const wireType = tag.value % 8;
    if (field === 0) throw invalid('GetInfo reply has a field numbered 0');
    if (wireType === 2) {
      const length = readVarint(buffer, at, fail);
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
    at = skipField(buffer, at, wireType, fail);
  }
  return info;
}

const fail = (why: string) => invalid(`GetInfo reply ${why}`);

function invalid(message: string): BerthError {
  return new BerthError('BERTH_PLUGIN_INFO_INVALID', message);
}
