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
      "the daemon's API: a unix socket path, HOST:PORT or https://HOST:PORT (default: /run/berth/berth.sock as root without --data-dir, else <data-dir>/berth.sock)",
    )
    .option(
      '--token-file <file>',
      'bearer token for a TCP API (default: $BERTH_TOKEN, else <data-dir>/api-token if readable)',
    )
    .option('--tls-ca <file>', "PEM CA of the daemon's TLS certificate (implies https)")
    .option('--tls-cert <file>', 'PEM client certificate for mutual TLS')
    .option('--tls-key <file>', 'PEM key of --tls-cert')
    .option(
      '--data-dir <dir>',
      'data directory of the daemon to talk to (default: $BERTH_DATA_DIR, else /var/lib/berth as root, else $XDG_STATE_HOME/berth, else ~/.local/state/berth)',
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
