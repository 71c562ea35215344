/**
 * The protobuf wire format's varints and unknown-field skipping, for the
 * registrar's hand decoders (plugin-info-decode.ts, registrar-wire.ts). `fail`
 * words the error for the message being read; the reason it is given says
 * what is wrong ("ends inside a varint", ...).
 */
export type WireFail = (why: string) => Error;

/** A varint at `at`: its value (refused past 2^53, no length or tag we could honour) and where it ends. */
export function readVarint(bytes: Uint8Array, at: number, fail: WireFail): { value: number; next: number } {
  let value = 0;
  let scale = 1;
  for (let i = at; i < bytes.length && i < at + 10; i++) {
    const byte = bytes[i] as number;
    value += (byte & 0x7f) * scale;
    scale *= 128;
    if ((byte & 0x80) === 0) {
      if (!Number.isSafeInteger(value)) throw fail('holds a varint too large to use');
      return { value, next: i + 1 };
    }
  }
  throw fail('ends inside a varint');
}

/** Past one field's value of `wireType` (its tag already read); where it ends. */
export function skipField(bytes: Uint8Array, at: number, wireType: number, fail: WireFail): number {
  let end: number;
  switch (wireType) {
    case 0:
      return readVarint(bytes, at, fail).next;
    case 1:
      end = at + 8;
      break;
    case 2: {
      const length = readVarint(bytes, at, fail);
      end = length.next + length.value;
      break;
    }
    case 5:
      end = at + 4;
      break;
    default:
      // Groups (3, 4) are proto2 only; 6 and 7 do not exist.
      throw fail(`has a field of wire type ${wireType}`);
  }
  if (end > bytes.length) throw fail('ends inside a field');
  return end;
}
