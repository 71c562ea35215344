import type { Command } from 'commander';
import type { SocketListResponse, SocketView } from '../../daemon/contract.js';
import { formatTable, relativeTime } from '../format-table.js';
import { type ClientFlags, clientFor, printJson, withClientOptions } from './client-options.js';

export type SocketRow = SocketView;

export function formatSockets(sockets: readonly SocketRow[], now: number): string {
  if (sockets.length === 0) return 'no plugin sockets found';
  return formatTable(
    ['SOCKET', 'STATE', 'PLUGIN', 'ATTEMPTS', 'RETRY', 'LAST ERROR'],
    sockets.map((s) => [
      s.socketPath,
      s.state,
      s.plugin ? `${s.plugin.type}/${s.plugin.name}` : '-',
      String(s.attempts),
      s.retryAt ? relativeTime(s.retryAt, now) : '-',
      s.lastError?.message ?? '-',
    ]),
  );
}

export function socketsCommand(program: Command): void {
  withClientOptions(
    program
      .command('sockets')
      .description('list every plugin socket with its state, last error and next retry'),
  ).action(async (flags: ClientFlags) => {
    const body = await clientFor(flags).request<SocketListResponse>('GET', '/v1/sockets');
    if (flags.json) printJson(body);
    else console.log(formatSockets(body.sockets, Date.now()));
  });
}
