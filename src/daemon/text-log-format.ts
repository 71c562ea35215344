/**
 * `--log-format text`: one readable line per event, from the JSON line pino
 * wrote: `<ISO time> <LEVEL> <component>: <message> key=value ...`. Values
 * with spaces, quotes or `=` are JSON-quoted; objects are compact JSON; an
 * error shows its message (and code), not its stack. Newlines inside values
 * are escaped, so one event is one line.
 */
const SHOWN_ELSEWHERE = new Set(['time', 'level', 'msg', 'pid', 'hostname', 'component']);

export function formatTextLine(jsonLine: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine.trimEnd();
  }
  const level = String(record.level ?? '').toUpperCase();
  const component = typeof record.component === 'string' ? `${record.component}: ` : '';
  const parts = [`${record.time ?? ''} ${level.padEnd(5)} ${component}${oneLine(String(record.msg ?? ''))}`];
  for (const [key, value] of Object.entries(record)) {
    if (SHOWN_ELSEWHERE.has(key) || value === undefined) continue;
    parts.push(`${key}=${formatValue(key, value)}`);
  }
  return parts.join(' ');
}

function formatValue(key: string, value: unknown): string {
  if (key === 'err' && typeof value === 'object' && value !== null) {
    const err = value as { message?: unknown; code?: unknown };
    const text = `${String(err.message ?? '')}${err.code === undefined ? '' : ` (${String(err.code)})`}`;
    return quote(text);
  }
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'object' && value !== null) return oneLine(JSON.stringify(value));
  return String(value);
}

function quote(text: string): string {
  return text === '' || /[\s"=]/.test(text) ? JSON.stringify(text) : text;
}

function oneLine(text: string): string {
  return text.replace(/\r?\n/g, '\\n');
}
