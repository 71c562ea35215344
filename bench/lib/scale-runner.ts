/**
 * One registrar under test in its own process, so its CPU time, peak RSS and
 * event-loop delay are its own: `berth` (createPluginNode over SQLite, as the
 * daemon composes it) or `bare` (bare-registrar.ts). Driven over IPC by
 * bench/scale.ts; every reply carries the runner's wall clock.
 *
 *   node scale-runner.js <berth|bare> <pluginsDir> <dataDir>
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { applyDaemonJitTuning } from '../../src/cli/jit-options.js';
import { createPluginNode, type PluginNode } from '../../src/plugin-node/index.js';
import { createMemoryStorage, createSqliteStorage, type SqliteStorage } from '../../src/storage/index.js';
import type { BareRegistrar } from './bare-registrar.js';

const [mode, pluginsDir, dataDir] = process.argv.slice(2) as [string, string, string];
const now = () => performance.timeOrigin + performance.now();
mkdirSync(pluginsDir, { recursive: true });

let count = 0;
const waiters = new Set<() => void>();
const setCount = (n: number) => {
  count = n;
  for (const wake of [...waiters]) wake();
};

let node: PluginNode | undefined;
let storage: SqliteStorage | undefined;
let bare: BareRegistrar | undefined;
const eld = monitorEventLoopDelay({ resolution: 5 });
let cpuAtBegin = process.cpuUsage();
let beganAt = now();

/**
 * This thread's time on a CPU and waiting in the run queue for one (ns), as
 * the kernel counts them (/proc/thread-self/schedstat); undefined where it
 * does not. The main thread runs berth's event loop: in a storm on two cores
 * shared with the plugin farm, the wait is the time the loop was ready to
 * run and the farm (or berth's own threads) held both cores.
 */
function schedstat(): { runNs: number; waitNs: number } | undefined {
  try {
    const [runNs, waitNs] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return runNs === undefined || waitNs === undefined ? undefined : { runNs, waitNs };
  } catch {
    return undefined;
  }
}
let schedAtBegin = schedstat();

async function start(): Promise<{ startedAt: number; readyAt: number }> {
  const startedAt = now();
  if (mode === 'berth') {
    // BENCH_SCALE_STORAGE=memory|none isolates the pipeline from the storage's write cost.
    const kind = process.env.BENCH_SCALE_STORAGE ?? 'sqlite';
    if (kind === 'sqlite') storage = createSqliteStorage({ path: join(dataDir, 'state.db') });
    let registered = 0;
    node = createPluginNode({
      pluginsDir,
      ...(kind === 'none' ? {} : { storage: storage ?? createMemoryStorage() }),
      handlers: { BenchPlugin: (registry) => registry },
      onEvent: (event) => {
        if (event.type === 'registered') setCount(++registered);
        else if (event.type === 'deregistered') setCount(--registered);
      },
    });
    await node.start();
    // As `berth run` does once started (src/cli/jit-options.ts). BENCH_NO_JIT_TUNING=1 keeps V8's defaults.
    if (process.env.BENCH_NO_JIT_TUNING !== '1') applyDaemonJitTuning();
  } else {
    // Imported only in this mode: berth's runner must not carry the floor's modules (its RSS is a goal).
    const { startBareRegistrar } = await import('./bare-registrar.js');
    bare = await startBareRegistrar(pluginsDir);
    bare.onChange(setCount);
  }
  return { startedAt, readyAt: now() };
}

/** Resolves with the wall time at which `count` first equals `target`. */
function waitCount(target: number, timeoutMs: number): Promise<{ at: number; count: number }> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (count !== target) return false;
      waiters.delete(check);
      clearTimeout(timer);
      resolve({ at: now(), count });
      return true;
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`${mode}: count ${count}, wanted ${target}, after ${timeoutMs} ms`));
    }, timeoutMs);
    if (!check()) waiters.add(check);
  });
}

type Command =
  | { id: number; op: 'start' }
  /** `eld: false` leaves the event-loop monitor off: its 5 ms timer would be most of an idle window's CPU. */
  | { id: number; op: 'begin'; eld?: boolean }
  | { id: number; op: 'end' }
  | { id: number; op: 'waitCount'; target: number; timeoutMs: number }
  | { id: number; op: 'stop' };

async function run(command: Command): Promise<unknown> {
  switch (command.op) {
    case 'start':
      return start();
    case 'begin':
      eld.reset();
      if (command.eld !== false) eld.enable();
      cpuAtBegin = process.cpuUsage();
      schedAtBegin = schedstat();
      beganAt = now();
      return { at: beganAt };
    case 'end': {
      eld.disable();
      const cpu = process.cpuUsage(cpuAtBegin);
      const sched = schedstat();
      const loop =
        sched === undefined || schedAtBegin === undefined
          ? { runMs: null, waitMs: null }
          : {
              runMs: (sched.runNs - schedAtBegin.runNs) / 1e6,
              waitMs: (sched.waitNs - schedAtBegin.waitNs) / 1e6,
            };
      return {
        at: now(),
        windowMs: now() - beganAt,
        cpuMs: (cpu.user + cpu.system) / 1000,
        peakRssBytes: process.resourceUsage().maxRSS * 1024,
        rssBytes: process.memoryUsage().rss,
        eldP99Ms: eld.percentile(99) / 1e6,
        eldMaxMs: eld.max / 1e6,
        loopRunMs: loop.runMs,
        loopWaitMs: loop.waitMs,
        count,
      };
    }
    case 'waitCount':
      return waitCount(command.target, command.timeoutMs);
    case 'stop':
      await node?.stop();
      await storage?.stop();
      bare?.close();
      return {};
  }
}

process.on('message', (command: Command) => {
  run(command).then(
    (result) => process.send?.({ id: command.id, ok: true, result }),
    (err: unknown) => process.send?.({ id: command.id, ok: false, error: String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send?.({ id: 0, ok: true, result: 'ready' });
