import type { Command } from 'commander';
import type { PluginListResponse, PluginSummaryView, PluginView } from '../../daemon/contract.js';
import { usageError } from '../cli-error.js';
import { formatTable, observedName, relativeTime } from '../format-table.js';
import { type ClientFlags, printListing, withClientOptions } from './client-options.js';

export type PluginRow = PluginSummaryView;

export function formatPlugins(plugins: readonly PluginRow[], now: number, maxWidth?: number): string {
  if (plugins.length === 0) return 'no plugins registered';
  return formatTable(
    ['TYPE', 'NAME', 'VERSIONS', 'INSTANCES', 'REGISTERED', 'SOURCE', 'SOCKET'],
    plugins.map((p) => [
      p.type,
      observedName(p.name, p.observed),
      p.versions.join(',') || p.version || '-',
      String(p.instances),
      relativeTime(p.registeredAt, now),
      p.source ?? '-',
      p.socketPath,
    ]),
    maxWidth,
  );
}

/** One plugin's instances, newest (current) first. */
export function formatPluginInstances(
  instances: readonly PluginView[],
  now: number,
  maxWidth?: number,
): string {
  return formatTable(
    ['TYPE', 'NAME', 'VERSIONS', 'REGISTERED', 'SOURCE', 'SOCKET'],
    instances.map((p, i) => [
      p.type,
      observedName(i === 0 ? `${p.name} (current)` : p.name, p.observed),
      p.versions.join(',') || p.version || '-',
      relativeTime(p.registeredAt, now),
      p.source ?? '-',
      p.socketPath,
    ]),
    maxWidth,
  );
}

export function pluginsCommand(program: Command): void {
  withClientOptions(
    program
      .command('plugins')
      .description('list the registered plugins (the current instance of each type and name)')
      .option('--type <type>', 'only plugins of this type')
      .option('--name <name>', 'show one plugin and its instances (needs --type; names may contain /)'),
  ).action(async (flags: ClientFlags & { type?: string; name?: string }) => {
    const typeQuery = flags.type === undefined ? '' : `?type=${encodeURIComponent(flags.type)}`;
    const watch = `/v1/events${typeQuery}`;
    if (flags.name !== undefined) {
      const type = flags.type;
      if (type === undefined) throw usageError('--name needs --type; see `berth plugins --help`');
      const path = `/v1/plugins/${encodeURIComponent(type)}/${encodeURIComponent(flags.name)}`;
      await printListing(
        'berth plugins --name',
        flags,
        async (client) => {
          const one = await client.request<{ plugin: PluginRow; instances: PluginView[] }>('GET', path);
          return {
            command: 'berth plugins',
            body: one,
            table: (width) => formatPluginInstances(one.instances, Date.now(), width),
            names: () => one.instances.map((p) => `${p.type}/${p.name}`),
          };
        },
        watch,
      );
      return;
    }
    await printListing(
      'berth plugins',
      flags,
      async (client) => {
        const body = await client.request<PluginListResponse>('GET', `/v1/plugins${typeQuery}`);
        return {
          command: 'berth plugins',
          body,
          table: (width) => formatPlugins(body.plugins, Date.now(), width),
          names: () => body.plugins.map((p) => `${p.type}/${p.name}`),
        };
      },
      watch,
    );
  });
}
