import { Option } from 'commander';
import { usageError } from './cli-error.js';
import { yaml } from './yaml.js';

/** `-o`: kubectl's output formats (a table when not given). */
export const OUTPUT_FORMATS = ['json', 'yaml', 'wide', 'name'] as const;
export type OutputFormat = 'table' | (typeof OUTPUT_FORMATS)[number];

export interface OutputFlags {
  output?: string;
  json?: boolean;
}

export function outputOption(): Option {
  return new Option(
    '-o, --output <format>',
    'print json, yaml, wide (every cell in full) or name (one name a line) instead of a table',
  ).choices(OUTPUT_FORMATS);
}

/** The format asked for; `--json` is `-o json`, and the two must agree. */
export function outputFormat(flags: OutputFlags): OutputFormat {
  const output = flags.output as OutputFormat | undefined;
  if (flags.json && output !== undefined && output !== 'json') {
    throw usageError(`--json and -o ${output} ask for different output; give one of them`);
  }
  if (flags.json) return 'json';
  return output ?? 'table';
}

/**
 * The width a table may take: the terminal's when stdout is one (long cells
 * are cut with an ellipsis); none for `-o wide` or when stdout is a pipe or a
 * file, where every cell is printed in full.
 */
export function tableWidth(
  format: OutputFormat,
  stdout: { isTTY?: boolean; columns?: number } = process.stdout,
): number | undefined {
  if (format !== 'table' || !stdout.isTTY || !stdout.columns) return undefined;
  return stdout.columns;
}

/** What a list or get command can print: its document, its table, and the names of its items. */
export interface Listing {
  body: unknown;
  /** The table, fitted to `maxWidth` when given. */
  table(maxWidth: number | undefined): string;
  /** One name a line for `-o name`; undefined: this command has no names. */
  names?(): string[];
  /** How `-o name` refers to the command in its error. */
  command: string;
}

/** The text a listing prints in the format asked for (without a final newline). */
export function renderListing(listing: Listing, format: OutputFormat): string {
  switch (format) {
    case 'json':
      return JSON.stringify(listing.body, null, 2);
    case 'yaml':
      return yaml().stringify(listing.body).trimEnd();
    case 'name': {
      if (listing.names === undefined) {
        throw usageError(`\`${listing.command}\` has no names to print; use -o json or -o yaml`);
      }
      return listing.names().join('\n');
    }
    case 'wide':
      return listing.table(undefined);
    case 'table':
      return listing.table(tableWidth(format));
  }
}
