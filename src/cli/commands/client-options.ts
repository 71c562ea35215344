import { type Command, Option } from 'commander';
import { ApiClient } from '../api-client.js';
import { type ApiTargetFlags, resolveApiTarget } from '../api-target.js';
import { usageError } from '../cli-error.js';
import { type Listing, type OutputFlags, outputFormat, outputOption, renderListing } from '../output.js';
import { watchListing } from '../watch.js';

export interface ClientFlags extends ApiTargetFlags, OutputFlags {
  watch?: boolean;
}

/** The commands `--watch` works with, for the error on the others. */
export const WATCHABLE = 'plugins, sockets, devices, csi drivers, cluster nodes and cluster plugins';

/** The options every client command shares: which daemon, and the output format. */
export function withClientOptions(command: Command, output = true): Command {
  command
    .option(
      '--api <path|host:port>',
      "the daemon's API: a unix socket path, HOST:PORT or https://HOST:PORT (default: /run/berth/berth.sock as root without --data-dir, else <data-dir>/berth.sock)",
    )
    .option(
      '--token-file <file>',
      "bearer token for a TCP API (default: $BERTH_TOKEN; the data directory's api-token only for the address its daemon recorded)",
    )
    .option('--tls-ca <file>', "PEM CA of the daemon's TLS certificate (implies https)")
    .option('--tls-cert <file>', 'PEM client certificate for mutual TLS')
    .option('--tls-key <file>', 'PEM key of --tls-cert')
    .option(
      '--data-dir <dir>',
      'data directory of the daemon to talk to (default: $BERTH_DATA_DIR, else /var/lib/berth as root, else $XDG_STATE_HOME/berth, else ~/.local/state/berth)',
    );
  if (output) {
    command
      .addOption(outputOption())
      .option('--json', 'print JSON for scripts (same as -o json)', false)
      .addOption(
        new Option('-w, --watch', `re-render on every change (works with ${WATCHABLE})`).default(false),
      );
  }
  return command;
}

export function clientFor(flags: ApiTargetFlags): ApiClient {
  return new ApiClient(resolveApiTarget(flags));
}

/**
 * Prints a listing in the format asked for, once, or with `--watch` again
 * after every change seen on `watchEvents` (an event route) until Ctrl-C.
 * A command with no `watchEvents` refuses `--watch`.
 */
export async function printListing(
  command: string,
  flags: ClientFlags,
  fetch: (client: ApiClient) => Promise<Listing>,
  watchEvents?: string,
): Promise<void> {
  const format = outputFormat(flags);
  if (flags.watch && watchEvents === undefined) {
    throw usageError(`\`${command}\` has nothing to watch; --watch works with ${WATCHABLE}`);
  }
  const client = clientFor(flags);
  if (!flags.watch || watchEvents === undefined) {
    process.stdout.write(`${renderListing(await fetch(client), format)}\n`);
    return;
  }
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await watchListing({
      client,
      eventsPath: watchEvents,
      fetch: () => fetch(client),
      format,
      signal: stop.signal,
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Prints what a command that changes something answered, in the format asked for (it has nothing to watch). */
export function printResult(command: string, flags: ClientFlags, listing: Omit<Listing, 'command'>): void {
  const format = outputFormat(flags);
  if (flags.watch) throw usageError(`\`${command}\` has nothing to watch; --watch works with ${WATCHABLE}`);
  process.stdout.write(`${renderListing({ ...listing, command }, format)}\n`);
}
