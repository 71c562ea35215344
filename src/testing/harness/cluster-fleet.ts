import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Etcd3 } from 'etcd3';
import {
  ClusterReader,
  type ClusterReaderOptions,
  ClusterWriter,
  type ClusterWriterOptions,
  registryPluginSource,
} from '../../cluster/index.js';
import type { PluginInstanceInfo } from '../../common/index.js';
import type { Registry } from '../../registry/index.js';
import { createRegistry } from '../../registry/index.js';
import { waitFor } from '../wait-for.js';
import { spawnModule } from './spawn-module.js';

/** A plugin instance for cluster tests. */
export function fleetPlugin(
  node: string,
  index: number,
  extra: Record<string, string> = {},
): PluginInstanceInfo {
  return {
    type: 'CSIPlugin',
    name: `csi-${index}.example.com`,
    version: '1.0.0',
    connectionInfo: { socketPath: `/var/lib/berth/${node}/csi-${index}.sock` },
    allocId: `/var/lib/berth/${node}/csi-${index}.sock`,
    options: { vendorVersion: '1.2.3', ...extra },
  };
}

/** An in-process "daemon": a real registry and a cluster writer. */
export interface FleetMember extends AsyncDisposable {
  registry: Registry;
  writer: ClusterWriter;
}

/** The etcd client is loaded only by tests that use it (etcd3 takes 0.5-1 s to load). */
async function newClient(endpoints: string[]): Promise<Etcd3> {
  const { createEtcdClient } = await import('../../cluster/etcd.js');
  return createEtcdClient({ endpoints });
}

export async function startFleetMember(
  endpoints: string[],
  nodeName: string,
  plugins: PluginInstanceInfo[],
  options: Partial<ClusterWriterOptions> = {},
): Promise<FleetMember> {
  const registry = createRegistry();
  await Promise.all(plugins.map((plugin) => registry.registerPlugin(plugin)));
  const writer = new ClusterWriter({
    client: options.client ?? (await newClient(endpoints)),
    ownsClient: true,
    source: registryPluginSource(registry),
    nodeName,
    backoff: { initialMs: 100, maxMs: 1_000, factor: 2 },
    ...options,
  });
  await writer.start();
  return {
    registry,
    writer,
    [Symbol.asyncDispose]: async () => {
      await writer.stop();
      await registry.stop();
    },
  };
}

export async function startFleetReader(endpoints: string[], options: Partial<ClusterReaderOptions> = {}) {
  const reader = new ClusterReader({
    client: options.client ?? (await newClient(endpoints)),
    ownsClient: true,
    probeIntervalMs: 250,
    staleAfterMs: 2_000,
    progressTimeoutMs: 60_000,
    backoff: { initialMs: 100, maxMs: 1_000, factor: 2 },
    ...options,
  });
  await reader.start();
  await reader.synced();
  return reader;
}

/** The cluster-daemon fixture as a real child process (for kill -9, SIGTERM and restarts). */
export interface FleetProcess {
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  send(command: unknown): void;
  waitLine(
    what: string,
    match: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  exited: Promise<void>;
}

export function spawnFleetProcess(
  fixture: URL,
  config: {
    endpoints: string[];
    nodeName: string;
    instance: string;
    prefix?: string;
    ttlSeconds: number;
    plugins: PluginInstanceInfo[];
  },
): FleetProcess {
  const child = spawnModule(fixture, [JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: Array<Record<string, unknown>> = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  if (child.stdout) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // Not ours.
      }
    });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.once('exit', () => child.kill('SIGKILL'));
  return {
    child,
    lines,
    exited,
    send: (command) => child.stdin?.write(`${JSON.stringify(command)}\n`),
    waitLine: (what, match, timeoutMs = 30_000) =>
      waitFor(
        `${config.nodeName}: ${what}${stderr ? ` (stderr: ${stderr.slice(-500)})` : ''}`,
        () => lines.find(match),
        {
          timeoutMs,
          intervalMs: 10,
        },
      ),
  };
}
