import type { Command } from 'commander';
import type { StatusView } from '../../daemon/contract.js';
import { type ClientFlags, printListing, withClientOptions } from './client-options.js';
import type { Lenient } from './lenient.js';

/** The daemon's status document; every field may be missing (an older or newer daemon). */
type StatusDoc = Lenient<StatusView>;

/** The storage health as the daemon reports it (`ok`, or `failing` with since and the last error). */
function storageHealthText(
  health:
    | {
        state?: string | undefined;
        since?: string | null | undefined;
        lastError?: { message?: string | undefined } | undefined;
      }
    | null
    | undefined,
): string {
  if (!health) return '-';
  if (health.state === 'ok') return 'ok';
  return `FAILING since ${health.since ?? '?'}: ${health.lastError?.message ?? 'unknown error'}`;
}

function clusterText(cluster: StatusDoc['cluster']): string {
  if (cluster === undefined) return '-';
  if (cluster === null) return 'not configured';
  const age = cluster.lastPublishAgeSeconds;
  return [
    `node ${cluster.node ?? '?'}`,
    `lease ${cluster.leaseState ?? '?'}`,
    age === null || age === undefined ? 'nothing published yet' : `last publish ${age}s ago`,
    cluster.stale ? 'view stale' : 'view current',
  ].join(', ');
}

export function formatStatus(status: StatusDoc): string {
  const counts = status.counts ?? {};
  const sockets = counts.sockets ?? {};
  const rows: Array<[string, string]> = [
    ['version', status.version ?? '-'],
    ['state', `${status.state ?? '-'} (pid ${status.pid ?? '?'}, up ${status.uptimeSeconds ?? 0}s)`],
    ['data dir', status.dataDir ?? '-'],
    ['plugins dir', status.pluginsDir ?? '-'],
    ['api', [status.api?.socket, status.api?.tcp].filter(Boolean).join(', ') || '-'],
    ['plugins', `${counts.plugins ?? 0} (${counts.instances ?? 0} instances)`],
    ['mode', status.mode ?? 'registrar'],
    [
      'sockets',
      status.mode === 'observe'
        ? `${sockets.total ?? 0} (observed ${sockets.observed ?? 0}, pending ${sockets.pending ?? 0}, ` +
          `stale ${sockets.stale ?? 0}, unreachable ${sockets.unreachable ?? 0})`
        : `${sockets.total ?? 0} (registered ${sockets.registered ?? 0}, pending ${sockets.pending ?? 0}, ` +
          `failed ${sockets.failed ?? 0}, backoff ${sockets.backoff ?? 0})`,
    ],
    ['pods', String(counts.pods ?? 0)],
    [
      'objects',
      `${status.objects?.source ?? '-'} source, ${status.objects?.strategy ?? '-'} strategy, ${counts.watchesOpen ?? 0} watches open`,
    ],
    ['event clients', String(counts.eventClients ?? 0)],
    ['state db', status.storage?.path ?? '-'],
    ['storage health', storageHealthText(status.storage?.health)],
    ['handlers', (status.handlers ?? []).map((h) => `${h.type} (${h.plugins ?? 0})`).join(', ') || '-'],
    ['cluster', clusterText(status.cluster)],
  ];
  const corruption = status.storage?.corruption;
  if (corruption) {
    rows.push([
      'storage',
      `CORRUPT state was set aside to ${corruption.movedTo}: ${corruption.error?.message ?? ''}`,
    ]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${`${k}:`.padEnd(width + 1)}  ${v}`).join('\n');
}

export function statusCommand(program: Command): void {
  withClientOptions(
    program.command('status').description("show the daemon's version, directories, counts and health"),
  ).action(async (flags: ClientFlags) => {
    await printListing('berth status', flags, async (client) => {
      const body = await client.request<StatusDoc>('GET', '/v1/status');
      return { command: 'berth status', body, table: () => formatStatus(body) };
    });
  });
}
