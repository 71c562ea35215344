import { type ChildProcess, fork } from 'node:child_process';

/** A child process driven by `{id, op, ...}` IPC messages that answers `{id, ok, result|error}`. */
export interface IpcChild {
  readonly process: ChildProcess;
  call<T>(op: string, args?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

export async function startIpcChild(
  modulePath: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<IpcChild> {
  // BENCH_CPU_PROF=<dir>: each child writes a V8 CPU profile there (node --cpu-prof).
  const profileDir = process.env.BENCH_CPU_PROF;
  const execArgv = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = fork(modulePath, args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv,
    env: { ...process.env, ...env },
  });
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 1;
  let ready!: () => void;
  let failed!: (err: Error) => void;
  const started = new Promise<void>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });
  child.on('message', (m: { id: number; ok: boolean; result?: unknown; error?: string }) => {
    if (m.id === 0) return ready();
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.ok) w?.resolve(m.result);
    else w?.reject(new Error(m.error ?? 'failed'));
  });
  child.once('exit', (code, signal) => {
    const err = new Error(`${modulePath} exited (${code ?? signal})`);
    failed(err);
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  });
  await started;
  let stopping: Promise<void> | undefined;
  return {
    process: child,
    call<T>(op: string, extra: Record<string, unknown> = {}): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ ...extra, op, id });
      });
    },
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => clearTimeout(kill));
        if (child.connected) child.disconnect();
        else child.kill('SIGTERM');
      });
      return stopping;
    },
  };
}
