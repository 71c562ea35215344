import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { IpcChild } from './ipc-child.js';

/**
 * A child process (the Go farm, the Go registrar) driven like an IpcChild,
 * but over JSON lines: `{id, op, ...}` on its stdin, `{id, ok, result|error}`
 * on its stdout, and `{id: 0}` once it is ready. Closing stdin ends it.
 */
export async function startJsonLineChild(binary: string, args: string[], label: string): Promise<IpcChild> {
  const child: ChildProcess = spawn(binary, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 1;
  let ready!: () => void;
  let failed!: (err: Error) => void;
  const started = new Promise<void>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    let m: { id: number; ok: boolean; result?: unknown; error?: string };
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    if (m.id === 0) return ready();
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.ok) w?.resolve(m.result);
    else w?.reject(new Error(`${label}: ${m.error ?? 'failed'}`));
  });
  child.once('error', (err) => failed(err));
  child.once('exit', (code, signal) => {
    const err = new Error(`${label} exited (${code ?? signal})`);
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
        child.stdin?.write(`${JSON.stringify({ ...extra, op, id })}\n`);
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
        child.stdin?.end();
      });
      return stopping;
    },
  };
}
