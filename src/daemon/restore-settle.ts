import type { Clock } from '../common/index.js';
import type { SocketStatus } from './api/api-types.js';

export interface RestoreSettleOptions {
  /** The plugin manager's socket states. */
  sockets(): SocketStatus[];
  /** Socket paths of the instances restored from storage. */
  restored: ReadonlySet<string>;
  /** Registers a callback run whenever a registration settles; returns an unsubscribe function. */
  onChange(listener: () => void): () => void;
  clock: Clock;
  /** Give up waiting after this long (a plugin that never answers must not hold the daemon back forever). */
  timeoutMs: number;
  /** Stop waiting when aborted (the daemon is stopping). */
  signal?: AbortSignal;
}

/**
 * After a restart, waits until every restored plugin whose socket is still in
 * the directory has had its registration attempt settle (registered, or
 * failed), so restored instances are confirmed or dropped on facts: a stale
 * socket file of a crashed plugin must not keep its instance in the registry,
 * and a live one must not be dropped and re-added (a deregistered/registered
 * pair of events for nothing).
 */
export function waitForRestoredSockets(options: RestoreSettleOptions): Promise<void> {
  const unsettled = () =>
    options.sockets().some((socket) => options.restored.has(socket.socketPath) && socket.state === 'pending');
  if (options.restored.size === 0 || options.signal?.aborted || !unsettled()) return Promise.resolve();
  return new Promise((resolve) => {
    const finish = () => {
      options.clock.clearTimeout(timer);
      unsubscribe();
      options.signal?.removeEventListener('abort', finish);
      resolve();
    };
    const timer = options.clock.setTimeout(finish, options.timeoutMs);
    options.signal?.addEventListener('abort', finish, { once: true });
    const unsubscribe = options.onChange(() => {
      if (!unsettled()) finish();
    });
  });
}
