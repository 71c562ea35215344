/**
 * Go's `%q` quoting, so error texts that upstream users match on read byte for
 * byte like the kubelet's (object managers, built-in handlers).
 */
const GO_ESCAPES: Record<string, string> = {
  '\u0007': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};

/**
 * Go's `%q` for a string (strconv.Quote), so error texts match upstream byte
 * for byte: `object "ns1"/"s1" not registered`. Printable characters are kept,
 * control characters become \xNN / \uNNNN escapes.
 */
export function goQuote(value: string): string {
  let out = '"';
  for (const ch of value) {
    const escaped = GO_ESCAPES[ch];
    if (escaped !== undefined) {
      out += escaped;
      continue;
    }
    const code = ch.codePointAt(0) ?? 0;
    if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code >= 0x80 && code < 0xa0) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
