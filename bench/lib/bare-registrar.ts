/**
 * The floor: a minimal registrar, a few dozen lines. It watches one
 * directory, and handshakes every new socket (fresh connection, GetInfo,
 * Notify(true)) with bounded parallelism; a failed dial is re-queued after
 * 20 ms, for about a second (a server between bind and listen). Nothing else: no
 * handlers, no state, no persistence, no backoff, no liveness.
 */
import { watch } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { dialRegistration } from '../../src/registration/registrar.js';

export interface BareRegistrar {
  readonly registered: number;
  onChange(listener: (registered: number) => void): void;
  close(): void;
}

export async function startBareRegistrar(dir: string, concurrency = 64): Promise<BareRegistrar> {
  const known = new Set<string>();
  const done = new Set<string>();
  const queue: string[] = [];
  let active = 0;
  let listener: (n: number) => void = () => {};
  const changed = () => listener(done.size);

  const attempts = new Map<string, number>();
  const handshake = async (path: string): Promise<void> => {
    try {
      const conn = await dialRegistration(path, { timeoutMs: 10_000 });
      try {
        await conn.getInfo({ timeoutMs: 10_000 });
        await conn.notifyRegistrationStatus({ pluginRegistered: true, error: '' }, { timeoutMs: 10_000 });
      } finally {
        conn.close();
      }
      if (known.has(path)) {
        done.add(path);
        changed();
      }
    } catch {
      // Retried after 20 ms without holding a parallelism slot, for about a second.
      const n = (attempts.get(path) ?? 0) + 1;
      attempts.set(path, n);
      if (n < 50 && known.has(path))
        setTimeout(() => {
          queue.push(path);
          pump();
        }, 20);
    }
  };
  const pump = () => {
    while (active < concurrency && queue.length > 0) {
      const path = queue.shift() as string;
      active++;
      void handshake(path).finally(() => {
        active--;
        pump();
      });
    }
  };
  const consider = async (path: string) => {
    if (!path.endsWith('.sock')) return;
    const stats = await lstat(path).catch(() => undefined);
    if (stats?.isSocket()) {
      if (known.has(path)) return;
      known.add(path);
      queue.push(path);
      pump();
    } else if (known.delete(path) && done.delete(path)) changed();
  };
  const watcher = watch(dir, (_event, name) => {
    if (name !== null) void consider(join(dir, name.toString()));
  });
  for (const name of await readdir(dir)) await consider(join(dir, name));
  return {
    get registered() {
      return done.size;
    },
    onChange(l) {
      listener = l;
    },
    close() {
      watcher.close();
    },
  };
}
