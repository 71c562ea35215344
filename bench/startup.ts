/**
 * Start-up with plugins already present: a fresh plugin manager starts over a
 * directory holding 100 listening plugin sockets; timed from start() until
 * every one is registered. Baselines: the same 100 bare handshakes done one
 * after another (what a sequential registrar costs at best), and all 100 at
 * once (the floor for a registrar that works in parallel, as berth does).
 */
import type { PluginHandler } from '../src/handlers/index.js';
import { createPluginManager } from '../src/plugin-manager/index.js';
import { createExamplePlugin, dialRegistration, type ExamplePlugin } from '../src/registration/index.js';
import { type BenchSection, LATENCY_COLUMNS, latencyRow } from './lib/report.js';
import { formatMs, summarize } from './lib/stats.js';
import { interleave, makeTempDir, nowMs, Stamp } from './lib/timing.js';

const PLUGINS = 100;
const WARMUP_ROUNDS = 2;
const ROUNDS = 25;
const RPC_TIMEOUT_MS = 10_000;
const TYPE = 'bench-startup';

const acceptingHandler: PluginHandler = {
  validatePlugin() {},
  registerPlugin() {},
  deRegisterPlugin() {},
};

async function handshake(socketPath: string): Promise<void> {
  const connection = await dialRegistration(socketPath, { timeoutMs: RPC_TIMEOUT_MS });
  try {
    await connection.getInfo({ timeoutMs: RPC_TIMEOUT_MS });
    await connection.notifyRegistrationStatus(
      { pluginRegistered: true, error: '' },
      { timeoutMs: RPC_TIMEOUT_MS },
    );
  } finally {
    connection.close();
  }
}

async function sequential(paths: readonly string[]): Promise<number> {
  const t0 = nowMs();
  for (const path of paths) await handshake(path);
  return nowMs() - t0;
}

async function parallel(paths: readonly string[]): Promise<number> {
  const t0 = nowMs();
  await Promise.all(paths.map((path) => handshake(path)));
  return nowMs() - t0;
}

interface StartTimes {
  allRegistered: number;
  startResolved: number;
  lastDiscovered: number;
}

/** A fresh manager over the populated directory. */
async function managerStart(pluginsDir: string): Promise<StartTimes> {
  const registered = new Set<string>();
  const all = new Stamp();
  let t0 = 0;
  let lastDiscovered = 0;
  const manager = createPluginManager({
    pluginsDir,
    resyncPeriodMs: 3_600_000,
    onEvent: (event) => {
      if (event.type === 'discovered') lastDiscovered = nowMs() - t0;
      if (event.type === 'plugin-registered') {
        registered.add(event.socketPath);
        if (registered.size === PLUGINS) all.mark();
      }
    },
  });
  try {
    manager.addHandler(TYPE, acceptingHandler);
    t0 = nowMs();
    await manager.start();
    const started = nowMs();
    const done = await all.wait(`${PLUGINS} registrations`, 60_000);
    return { allRegistered: done - t0, startResolved: started - t0, lastDiscovered };
  } finally {
    // Stopping does not deregister (as the kubelet): the plugins stay up for the next round.
    await manager.stop();
  }
}

export async function startupBenchmark(): Promise<BenchSection> {
  const dir = makeTempDir('berth-bench-start-');
  const plugins: ExamplePlugin[] = [];
  try {
    const pluginsDir = `${dir.path}/plugins`;
    for (let i = 0; i < PLUGINS; i++) {
      const socketPath = `${pluginsDir}/p-${i}.sock`;
      const plugin = createExamplePlugin({
        socketPath,
        name: `plugin-${i}`,
        type: TYPE,
        versions: ['1.0.0'],
      });
      plugins.push(plugin);
      await plugin.start();
    }
    const paths = plugins.map((p) => p.socketPath);

    const seq: number[] = [];
    const par: number[] = [];
    const all: number[] = [];
    const started: number[] = [];
    const discovered: number[] = [];
    for (let i = 0; i < WARMUP_ROUNDS; i++) {
      await sequential(paths);
      await parallel(paths);
      await managerStart(pluginsDir);
    }
    await interleave(ROUNDS, [
      async () => {
        seq.push(await sequential(paths));
      },
      async () => {
        par.push(await parallel(paths));
      },
      async () => {
        const times = await managerStart(pluginsDir);
        all.push(times.allRegistered);
        started.push(times.startResolved);
        discovered.push(times.lastDiscovered);
      },
    ]);

    const base = summarize(seq);
    return {
      title: `Start-up with ${PLUGINS} plugins already present`,
      method:
        `${PLUGINS} example plugins listen in the plugins directory before berth starts. Each round creates a ` +
        'fresh plugin manager and times start() → the last onRegistered; the baselines perform the same ' +
        `${PLUGINS} bare handshakes (fresh dial + GetInfo + Notify) sequentially, and all at once. ` +
        `${WARMUP_ROUNDS} warm-up rounds, then ${ROUNDS} rounds with the three cases interleaved. The manager is ` +
        'stopped after each round (which does not deregister), so every round starts from the same directory.',
      tables: [
        {
          caption: `Time for all ${PLUGINS}; baseline = ${PLUGINS} sequential bare handshakes.`,
          columns: LATENCY_COLUMNS,
          rows: [
            latencyRow(`${PLUGINS} sequential bare handshakes`, base),
            latencyRow(`${PLUGINS} parallel bare handshakes`, summarize(par), base),
            latencyRow('berth: start() → all registered', summarize(all), base),
          ],
        },
      ],
      notes: [
        `Medians: the last socket was discovered after ${formatMs(summarize(discovered).p50)} and start() ` +
          `(first directory scan done) resolved after ${formatMs(summarize(started).p50)}, against ` +
          `${formatMs(summarize(all).p50)} for all registered: registrations follow discovery closely and run ` +
          'concurrently, so the directory scan (which inspects one socket at a time while the registrations ' +
          'it started compete for the same event loop) sets the pace.',
      ],
    };
  } finally {
    for (const plugin of plugins) await plugin.stop();
    dir.remove();
  }
}
