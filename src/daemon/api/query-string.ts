/** A query-string value, or undefined (repeated keys take the last). */
export function queryString(query: unknown, key: string): string | undefined {
  const value = (query as Record<string, unknown> | undefined)?.[key];
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  return typeof last === 'string' && last !== '' ? last : undefined;
}
