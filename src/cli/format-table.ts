/**
 * Aligned columns for people: a header row, then one row per item, columns
 * separated by two spaces; the last column is not padded (no trailing blanks).
 */
export function formatTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    headers
      .map((_, i) => {
        const cell = cells[i] ?? '';
        return i === headers.length - 1 ? cell : cell.padEnd(widths[i] ?? 0);
      })
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** A short relative time for a table cell: "in 3s", "2m ago". */
export function relativeTime(iso: string | null | undefined, now: number): string {
  if (!iso) return '-';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const delta = Math.round((at - now) / 1000);
  const abs = Math.abs(delta);
  const text = abs < 60 ? `${abs}s` : abs < 3600 ? `${Math.round(abs / 60)}m` : `${Math.round(abs / 3600)}h`;
  return delta >= 0 ? `in ${text}` : `${text} ago`;
}

/** The CLI's marker for something berth only observed (observe mode): `name (observed)`. */
export function observedName(name: string, observed: boolean | undefined): string {
  return observed === true ? `${name} (observed)` : name;
}
