import { type ChildProcess, fork } from 'node:child_process';

/** A child process driven by `{id, op, ...}` requests that answers `{id, ok, result|error}`. */
export interface IpcChild {
  readonly process: ChildProcess;
  call<T>(op: string, args?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

interface Answer {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

/** How requests reach a child and its answers come back (IPC messages, or JSON lines on stdio). */
export interface ChildChannel {
  send(request: Record<string, unknown>): void;
  onAnswer(handle: (answer: Answer) => void): void;
  /** Asks the child to end (it exits by itself); SIGKILL follows after 10 s. */
  end(): void;
  /** Prefixes a failed answer's error with the child's label. */
  labelErrors: boolean;
}

/**
 * Drives a started child over `channel`: resolves once it answered `{id: 0}`
 * (ready), then matches answers to requests by id. Every pending request fails
 * when the child exits, and so does every later one (a crashed runner then
 * ends the benchmark instead of leaving it waiting, its farm still running).
 */
export async function driveChild(
  child: ChildProcess,
  label: string,
  channel: ChildChannel,
): Promise<IpcChild> {
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 1;
  let ready!: () => void;
  let failed!: (err: Error) => void;
  const started = new Promise<void>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });
  channel.onAnswer((m) => {
    if (m.id === 0) return ready();
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.ok) w?.resolve(m.result);
    else w?.reject(new Error(`${channel.labelErrors ? `${label}: ` : ''}${m.error ?? 'failed'}`));
  });
  // After the exit every call fails at once: a request sent to a dead child would never be answered.
  let exited: Error | undefined;
  child.on('error', (err) => failed(err));
  child.once('exit', (code, signal) => {
    const err = new Error(`${label} exited (${code ?? signal})`);
    exited = err;
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
        if (exited !== undefined) {
          reject(exited);
          return;
        }
        const id = next++;
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        channel.send({ ...extra, op, id });
      });
    },
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        channel.end();
      });
      return stopping;
    },
  };
}

/** A Node module forked with an IPC channel (bench/lib/scale-runner.ts). */
export function startIpcChild(
  modulePath: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<IpcChild> {
  // BENCH_CPU_PROF=<dir>: each child writes a V8 CPU profile there (node --cpu-prof);
  // BENCH_CPU_PROF_INTERVAL=<µs> samples more often than the default 1 ms.
  const profileDir = process.env.BENCH_CPU_PROF;
  const interval = process.env.BENCH_CPU_PROF_INTERVAL;
  // BENCH_RUNNER_FLAGS: more node/V8 flags for the child (e.g. --trace-gc), split on spaces.
  const execArgv = [
    ...(profileDir
      ? [
          '--cpu-prof',
          `--cpu-prof-dir=${profileDir}`,
          ...(interval ? [`--cpu-prof-interval=${interval}`] : []),
        ]
      : []),
    ...(process.env.BENCH_RUNNER_FLAGS?.split(' ').filter(Boolean) ?? []),
  ];
  const child = fork(modulePath, args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv,
    env: { ...process.env, ...env },
  });
  return driveChild(child, modulePath, {
    send: (request) => child.send(request),
    onAnswer: (handle) => child.on('message', handle),
    end: () => (child.connected ? child.disconnect() : child.kill('SIGTERM')),
    labelErrors: false,
  });
}
