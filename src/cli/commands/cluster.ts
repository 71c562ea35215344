import type { Command } from 'commander';
import type {
  ClusterNodesResponse,
  ClusterNodeView,
  ClusterPluginsResponse,
  ClusterPluginView,
  ClusterViewFields,
} from '../../daemon/contract.js';
import { formatTable, relativeTime } from '../format-table.js';
import { type ClientFlags, clientFor, printListing, withClientOptions } from './client-options.js';
import { followToStdout } from './events.js';

type NodesBody = ClusterNodesResponse;
type PluginsBody = ClusterPluginsResponse;

function staleNote(status: ClusterViewFields): string {
  return status.stale
    ? `\n(stale: etcd's quorum has not been reached since ${new Date(status.staleSince ?? 0).toISOString()}; showing the last data)`
    : '';
}

export function formatClusterNodes(body: NodesBody, now: number, maxWidth?: number): string {
  const conflict = body.self?.conflict?.message ? `\nthis daemon: ${body.self.conflict.message}` : '';
  if (body.nodes.length === 0) return `no nodes publish to the cluster view${staleNote(body)}${conflict}`;
  return (
    formatTable(
      ['NODE', 'PLUGINS', 'STARTED', 'LEASE', 'VERSION'],
      body.nodes.map((n) => [
        n.node,
        String(n.plugins),
        relativeTime(new Date(n.startedAt).toISOString(), now),
        n.lease,
        n.daemon,
      ]),
      maxWidth,
    ) +
    staleNote(body) +
    conflict
  );
}

export function formatClusterPlugins(body: PluginsBody, maxWidth?: number): string {
  if (body.plugins.length === 0) return `no plugins in the cluster view${staleNote(body)}`;
  return (
    formatTable(
      ['NODE', 'TYPE', 'NAME', 'VERSIONS', 'HEALTH', 'ENDPOINT'],
      body.plugins.map((p) => [
        p.node,
        p.type,
        p.name,
        p.versions.join(',') || '-',
        p.health.message ? `${p.health.state} (${p.health.message})` : p.health.state,
        p.endpoint,
      ]),
      maxWidth,
    ) + staleNote(body)
  );
}

/** One line per cluster event for people. */
export function formatClusterEvent(event: string, data: Record<string, unknown>): string {
  const head = `rev ${String(data.revision ?? '?').padStart(6)}  ${event.padEnd(14)}`;
  if (event === 'reset' || event === 'lagged') {
    return `${head}  events were missed (${event}); run \`berth cluster plugins\` to resynchronise`;
  }
  const plugin = data.plugin as ClusterPluginView | undefined;
  const node = data.node as Omit<ClusterNodeView, 'plugins'> | undefined;
  if (plugin)
    return `${head}  ${plugin.node}  ${plugin.type}/${plugin.name}  ${plugin.health.state}  ${plugin.endpoint}`;
  if (node) return `${head}  ${node.node}  lease ${node.lease}`;
  return `${head}  ${String(data.reason ?? '')}`.trimEnd();
}

export function clusterCommand(program: Command): void {
  const cluster = program
    .command('cluster')
    .description('the fleet view on etcd: nodes, their plugins, live events');
  withClientOptions(
    cluster.command('nodes').description('list the nodes that publish to the cluster view'),
  ).action(async (flags: ClientFlags) => {
    await printListing(
      'berth cluster nodes',
      flags,
      async (client) => {
        const body = await client.request<NodesBody>('GET', '/v1/cluster/nodes');
        return {
          command: 'berth cluster nodes',
          body,
          table: (width) => formatClusterNodes(body, Date.now(), width),
          names: () => body.nodes.map((n) => n.node),
        };
      },
      '/v1/cluster/events',
    );
  });
  withClientOptions(
    cluster
      .command('plugins')
      .description('list the plugins of every node')
      .option('--type <type>', 'only plugins of this type')
      .option('--name <name>', 'only plugins of this name')
      .option('--node <node>', 'only plugins of this node'),
  ).action(async (flags: ClientFlags & { type?: string; name?: string; node?: string }) => {
    const query = new URLSearchParams();
    for (const key of ['type', 'name', 'node'] as const) {
      const value = flags[key];
      if (value !== undefined) query.set(key, value);
    }
    const suffix = query.size === 0 ? '' : `?${query.toString()}`;
    await printListing(
      'berth cluster plugins',
      flags,
      async (client) => {
        const body = await client.request<PluginsBody>('GET', `/v1/cluster/plugins${suffix}`);
        return {
          command: 'berth cluster plugins',
          body,
          table: (width) => formatClusterPlugins(body, width),
          names: () => body.plugins.map((p) => `${p.node}/${p.type}/${p.name}`),
        };
      },
      '/v1/cluster/events',
    );
  });
  withClientOptions(
    cluster
      .command('events')
      .description(
        'follow changes of the cluster view until interrupted (resumes after a dropped connection)',
      ),
    false,
  )
    .option('--json', 'one JSON document per line', false)
    .action(async (flags: ClientFlags) => {
      await followToStdout(clientFor(flags), '/v1/cluster/events', (message) =>
        flags.json
          ? message.data
          : formatClusterEvent(message.event, JSON.parse(message.data) as Record<string, unknown>),
      );
    });
}
