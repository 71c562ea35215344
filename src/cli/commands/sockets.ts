import type { Command } from 'commander';
import type { SocketListResponse, SocketView } from '../../daemon/contract.js';
import { formatTable, relativeTime } from '../format-table.js';
import { type ClientFlags, printListing, withClientOptions } from './client-options.js';

export type SocketRow = SocketView;

/** The dry run's verdict in a table cell: would the kubelet accept the plugin, and if not why. */
function verdictCell(verdict: SocketRow['verdict'] | undefined): string {
  if (!verdict) return '-';
  return verdict.accepted ? 'kubelet would accept' : `kubelet would refuse: ${verdict.error ?? '?'}`;
}

export function formatSockets(sockets: readonly SocketRow[], now: number, maxWidth?: number): string {
  if (sockets.length === 0) return 'no plugin sockets found';
  // Observe mode: what answered shows the dry run's verdict; what did not, its error.
  if (
    sockets.some(
      (s) => s.verdict || s.state === 'observed' || s.state === 'stale' || s.state === 'unreachable',
    )
  ) {
    return formatTable(
      ['SOCKET', 'STATE', 'PLUGIN', 'ENDPOINT', 'VERSIONS', 'VERDICT / ERROR'],
      sockets.map((s) => [
        s.socketPath,
        s.state,
        s.plugin ? `${s.plugin.type}/${s.plugin.name}` : '-',
        s.endpoint ?? '-',
        s.versions.join(',') || '-',
        s.verdict ? verdictCell(s.verdict) : (s.lastError?.message ?? '-'),
      ]),
      maxWidth,
    );
  }
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
    maxWidth,
  );
}

export function socketsCommand(program: Command): void {
  withClientOptions(
    program
      .command('sockets')
      .description(
        'list every plugin socket with its state, last error and next retry (observe mode: GetInfo and the dry-run verdict)',
      ),
  ).action(async (flags: ClientFlags) => {
    await printListing(
      'berth sockets',
      flags,
      async (client) => {
        const body = await client.request<SocketListResponse>('GET', '/v1/sockets');
        return {
          command: 'berth sockets',
          body,
          table: (width) => formatSockets(body.sockets, Date.now(), width),
          names: () => body.sockets.map((s) => s.socketPath),
        };
      },
      '/v1/events',
    );
  });
}
