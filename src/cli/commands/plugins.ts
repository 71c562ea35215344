import type { Command } from 'commander';
import type { PluginListResponse, PluginSummaryView, PluginView } from '../../daemon/contract.js';
import { usageError } from '../cli-error.js';
import { formatTable, observedName, relativeTime } from '../format-table.js';
import { type ClientFlags, clientFor, printJson, withClientOptions } from './client-options.js';

export type PluginRow = PluginSummaryView;

export function formatPlugins(plugins: readonly PluginRow[], now: number): string {
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
  );
}

/** One plugin's instances, newest (current) first. */
export function formatPluginInstances(instances: readonly PluginView[], now: number): string {
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
    if (flags.name !== undefined) {
      if (flags.type === undefined) throw usageError('--name needs --type; see `berth plugins --help`');
      const path = `/v1/plugins/${encodeURIComponent(flags.type)}/${encodeURIComponent(flags.name)}`;
      const one = await clientFor(flags).request<{ plugin: PluginRow; instances: PluginView[] }>('GET', path);
      if (flags.json) printJson(one);
      else console.log(formatPluginInstances(one.instances, Date.now()));
      return;
    }
    const query = flags.type === undefined ? '' : `?type=${encodeURIComponent(flags.type)}`;
    const body = await clientFor(flags).request<PluginListResponse>('GET', `/v1/plugins${query}`);
    if (flags.json) printJson(body);
    else console.log(formatPlugins(body.plugins, Date.now()));
  });
}
