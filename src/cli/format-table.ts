/** The narrowest a truncated column gets (its header may be longer). */
const MIN_TRUNCATED_WIDTH = 8;
const ELLIPSIS = '…';

/**
 * The width every column may take so the row fits `maxWidth`: the widest
 * columns are cut down to one common limit (long cells such as LAST ERROR
 * first), no column below its header or MIN_TRUNCATED_WIDTH.
 */
function fitWidths(widths: readonly number[], floors: readonly number[], maxWidth: number): number[] {
  const separators = 2 * (widths.length - 1);
  const total = () => widths.reduce((sum, w) => sum + w, 0) + separators;
  if (total() <= maxWidth) return [...widths];
  // The largest common limit that fits (a column never shrinks below its floor).
  let limit = Math.max(...widths);
  const fitted = (cap: number) => widths.map((w, i) => Math.min(w, Math.max(cap, floors[i] ?? 0)));
  while (limit > 0) {
    const sum = fitted(limit).reduce((a, w) => a + w, 0) + separators;
    if (sum <= maxWidth) break;
    limit -= 1;
  }
  return fitted(limit);
}

function truncate(cell: string, width: number): string {
  return cell.length <= width ? cell : `${cell.slice(0, Math.max(0, width - 1))}${ELLIPSIS}`;
}

/**
 * Aligned columns for people: a header row, then one row per item, columns
 * separated by two spaces; the last column is not padded (no trailing blanks).
 * With `maxWidth` (a terminal's width), long cells are cut with an ellipsis
 * so each row fits; without it every cell is printed in full.
 */
export function formatTable(
  headers: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  maxWidth?: number,
): string {
  const natural = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const floors = headers.map((header) => Math.max(header.length, MIN_TRUNCATED_WIDTH));
  const widths = maxWidth === undefined ? natural : fitWidths(natural, floors, maxWidth);
  const line = (cells: readonly string[]) =>
    headers
      .map((_, i) => {
        const cell = truncate(cells[i] ?? '', widths[i] ?? 0);
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
