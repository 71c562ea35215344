/**
 * What every benchmark module returns, and how run-all renders it: a section
 * per benchmark with one or more tables (each names the baseline its ratios
 * refer to) and free-text notes.
 */
import { formatMs, formatRatio, type Summary } from './stats.js';

export interface BenchTable {
  /** What the table compares, and which row is its baseline. */
  caption: string;
  columns: string[];
  rows: string[][];
}

export interface BenchSection {
  title: string;
  /** One paragraph: what is measured, against which baseline, how many iterations. */
  method: string;
  tables: BenchTable[];
  notes: string[];
}

/** A benchmark module's entry point; it must clean up everything it starts before resolving. */
export type Benchmark = () => Promise<BenchSection>;

export const LATENCY_COLUMNS = ['case', 'n', 'p50', 'p90', 'p99', 'mean', 'p50 ratio', 'p99 ratio'];

/** One latency row; ratios are against `baseline` (omit it for the baseline row itself). */
export function latencyRow(name: string, summary: Summary, baseline?: Summary): string[] {
  return [
    name,
    String(summary.n),
    formatMs(summary.p50),
    formatMs(summary.p90),
    formatMs(summary.p99),
    formatMs(summary.mean),
    baseline === undefined ? '1× (baseline)' : formatRatio(summary.p50 / baseline.p50),
    baseline === undefined ? '1× (baseline)' : formatRatio(summary.p99 / baseline.p99),
  ];
}

/** A GitHub-style table, padded so that biome's markdown formatter leaves it as is. */
export function markdownTable(columns: readonly string[], rows: readonly string[][]): string {
  const escapeCell = (cell: string) => cell.replaceAll('|', '\\|');
  const body = rows.map((row) => columns.map((_, i) => escapeCell(row[i] ?? '')));
  const head = columns.map(escapeCell);
  const widths = head.map((cell, i) => Math.max(3, cell.length, ...body.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/** A fixed-width table for the terminal. */
export function textTable(columns: readonly string[], rows: readonly string[][]): string {
  const widths = columns.map((column, i) =>
    Math.max(column.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
