import type { Command } from 'commander';
import type { PluginListResponse, PluginSummaryView } from '../../daemon/contract.js';
import { formatTable, relativeTime } from '../format-table.js';
import { type ClientFlags, clientFor, printJson, withClientOptions } from './client-options.js';

export type PluginRow = PluginSummaryView;

export function formatPlugins(plugins: readonly PluginRow[], now: number): string {
  if (plugins.length === 0) return 'no plugins registered';
  return formatTable(
    ['TYPE', 'NAME', 'VERSIONS', 'INSTANCES', 'REGISTERED', 'SOCKET'],
    plugins.map((p) => [
      p.type,
      p.name,
      p.versions.join(',') || p.version || '-',
      String(p.instances),
      relativeTime(p.registeredAt, now),
      p.socketPath,
    ]),
  );
}

export function pluginsCommand(program: Command): void {
  withClientOptions(
    program
      .command('plugins')
      .description('list the registered plugins (the current instance of each type and name)')
      .option('--type <type>', 'only plugins of this type'),
  ).action(async (flags: ClientFlags & { type?: string }) => {
    const query = flags.type === undefined ? '' : `?type=${encodeURIComponent(flags.type)}`;
    const body = await clientFor(flags).request<PluginListResponse>('GET', `/v1/plugins${query}`);
    if (flags.json) printJson(body);
    else console.log(formatPlugins(body.plugins, Date.now()));
  });
}
