import type { ChildProcess } from 'node:child_process';
import { siblingModule, spawnModule, stopChild } from './spawn-module.js';

export interface FarmSocketStats {
  path: string;
  /** HTTP/2 connections the socket accepted, and how many are open now. */
  connections: number;
  openConnections: number;
  getInfo: number;
  notifyTrue: number;
  notifyFalse: number;
  /** Wall-clock ms (performance.timeOrigin-based) when the socket started listening. */
  readyAt: number;
  /** Wall-clock ms of the first Notify(true); 0 if none. */
  firstNotifyTrueAt: number;
}

/**
 * Many registration sockets served by one child process (see
 * plugin-farm-process.ts): each binds, then (after `gapMs`) listens, and
 * counts GetInfo and Notify calls. Stale sockets are bound and never listened on.
 */
export interface PluginFarm extends AsyncDisposable {
  readonly pid: number;
  /**
   * Serves `paths` (name = file name without .sock); resolves with each socket's listen time.
   * `getInfoDelayMs`: each GetInfo is answered that long after it arrived.
   */
  serve(
    paths: string[],
    options?: { type?: string; gapMs?: number; getInfoDelayMs?: number },
  ): Promise<number[]>;
  /** Leaves socket files that refuse connections (bound, never listening). */
  stale(paths: string[]): Promise<void>;
  /** Closes the servers and removes their socket files. */
  remove(paths: string[]): Promise<void>;
  /** Closes the sockets' open connections; the servers keep listening. */
  dropConnections(paths: string[]): Promise<void>;
  stats(): Promise<{ sockets: FarmSocketStats[]; cpuUserMs: number }>;
  reset(): Promise<void>;
  /** Waits for the socket's first Notify(true); both times are the farm's wall clock (ms). */
  notified(path: string, timeoutMs?: number): Promise<{ readyAt: number; notifiedAt: number }>;
  /** The farm's wall clock (performance.timeOrigin + performance.now()). */
  clock(): Promise<number>;
  stop(): Promise<void>;
}

export async function startPluginFarm(): Promise<PluginFarm> {
  const child: ChildProcess = spawnModule(siblingModule(import.meta.url, './plugin-farm-process'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let next = 1;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  child.on('message', (message: { id: number; ok: boolean; result?: unknown; error?: string }) => {
    if (message.id === 0) {
      ready();
      return;
    }
    const pending = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.ok) pending?.resolve(message.result);
    else pending?.reject(new Error(`plugin farm: ${message.error ?? 'failed'}`));
  });
  child.once('exit', (code, signal) => {
    for (const pending of waiting.values())
      pending.reject(new Error(`plugin farm exited (${code ?? signal})`));
    waiting.clear();
  });
  await started;
  const call = <T>(command: Record<string, unknown>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ ...command, id });
    });
  let stopping: Promise<void> | undefined;
  const farm: PluginFarm = {
    pid: child.pid ?? 0,
    serve: async (paths, options = {}) =>
      (
        await call<{ readyAt: number[] }>({
          op: 'serve',
          paths,
          type: options.type ?? 'BenchPlugin',
          gapMs: options.gapMs ?? 0,
          getInfoDelayMs: options.getInfoDelayMs ?? 0,
        })
      ).readyAt,
    stale: (paths) => call({ op: 'stale', paths }),
    remove: (paths) => call({ op: 'remove', paths }),
    dropConnections: (paths) => call({ op: 'dropConnections', paths }),
    stats: () => call({ op: 'stats' }),
    reset: () => call({ op: 'reset' }),
    notified: (path, timeoutMs = 60_000) => call({ op: 'notified', path, timeoutMs }),
    clock: async () => (await call<{ now: number }>({ op: 'clock' })).now,
    stop: () => {
      stopping ??= (async () => {
        if (child.connected) child.disconnect();
        await stopChild(child, 'SIGTERM', 5_000);
      })();
      return stopping;
    },
    [Symbol.asyncDispose]: () => farm.stop(),
  };
  return farm;
}
