import type { Command } from 'commander';
import { usageError } from '../cli-error.js';
import { type ClientFlags, clientFor, withClientOptions } from './client-options.js';
import { startDashboard } from './dashboard-server.js';

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) {
    throw usageError(`--port: expected a port number 0-65535, got ${JSON.stringify(text)}`);
  }
  return port;
}

/** `berth dashboard`: a loopback page server showing the daemon live, in the manner of `kubectl proxy`. */
export function dashboardCommand(program: Command): void {
  withClientOptions(
    program
      .command('dashboard')
      .description(
        'serve a live read-only dashboard of the daemon on 127.0.0.1; prints its URL (with a one-time token) first',
      )
      .option('--port <port>', 'port on 127.0.0.1 to serve on (default: a free one)'),
    false,
  ).action(async (flags: ClientFlags & { port?: string }) => {
    const port = flags.port === undefined ? 0 : parsePort(flags.port);
    const { target } = clientFor(flags);
    const dashboard = await startDashboard({ target, port });
    console.log(`berth dashboard: ${dashboard.url}`);
    console.log('serving until interrupted (Ctrl-C)');
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    await dashboard.close();
  });
}
