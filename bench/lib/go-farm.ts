import type { PluginFarm } from '../../src/testing/harness/index.js';
import { goPeers } from '../../test/fixtures/go-peers.js';
import { startJsonLineChild } from './json-line-child.js';

/**
 * The grpc-go plugin farm (test/fixtures/go/plugin-farm, built once per
 * source hash by go-peers.ts) behind the same interface as the Node farm of
 * src/testing: one grpc.Server per socket, in its own process.
 */
export async function startGoPluginFarm(): Promise<PluginFarm> {
  const { pluginFarm } = await goPeers();
  const child = await startJsonLineChild(pluginFarm, [], 'Go plugin farm');
  const farm: PluginFarm = {
    pid: child.process.pid ?? 0,
    serve: async (paths, options = {}) =>
      (
        await child.call<{ readyAt: number[] }>('serve', {
          paths,
          type: options.type ?? 'BenchPlugin',
          gapMs: options.gapMs ?? 0,
          getInfoDelayMs: options.getInfoDelayMs ?? 0,
        })
      ).readyAt,
    stale: (paths) => child.call('stale', { paths }),
    remove: (paths) => child.call('remove', { paths }),
    dropConnections: (paths) => child.call('dropConnections', { paths }),
    stats: () => child.call('stats'),
    reset: () => child.call('reset'),
    notified: (path, timeoutMs = 60_000) => child.call('notified', { path, timeoutMs }),
    clock: async () => (await child.call<{ now: number }>('clock')).now,
    stop: () => child.stop(),
    [Symbol.asyncDispose]: () => child.stop(),
  };
  return farm;
}

/** The bare grpc-go registrar (test/fixtures/go/registrar), driven like bench/lib/scale-runner.ts. */
export async function startGoRegistrar(pluginsDir: string) {
  const { registrar } = await goPeers();
  return startJsonLineChild(registrar, [pluginsDir], 'Go registrar');
}
