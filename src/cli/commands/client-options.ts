import type { Command } from 'commander';
import { ApiClient } from '../api-client.js';
import { type ApiTargetFlags, resolveApiTarget } from '../api-target.js';

export interface ClientFlags extends ApiTargetFlags {
  json?: boolean;
}

/** The options every client command shares: which daemon, and JSON output. */
export function withClientOptions(command: Command, json = true): Command {
  command
    .option(
      '--api <path|host:port>',
      "the daemon's API: a unix socket path or HOST:PORT (default: <data-dir>/berth.sock)",
    )
    .option(
      '--data-dir <dir>',
      'data directory of the daemon to talk to (default: $BERTH_DATA_DIR, else $XDG_STATE_HOME/berth, else ~/.local/state/berth)',
    );
  if (json) command.option('--json', 'print JSON for scripts instead of a table', false);
  return command;
}

export function clientFor(flags: ApiTargetFlags): ApiClient {
  return new ApiClient(resolveApiTarget(flags));
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
