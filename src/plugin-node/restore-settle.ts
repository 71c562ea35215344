import type { Clock } from '../common/index.js';

/** A socket's state as the plugin manager reports it; only `pending` means "not settled yet". */
export type SettleState =
  | 'pending'
  | 'registered'
  | 'failed'
  | 'backoff'
  | 'observed'
  | 'stale'
  | 'unreachable';

export interface RestoreSettleOptions {
  /** One socket's state now (undefined: berth does not know the socket). */
  state(socketPath: string): SettleState | undefined;
  /** Socket paths of the instances restored from storage. */
  restored: ReadonlySet<string>;
  /** Registers a callback run with the socket path whenever something settles for it; returns an unsubscribe function. */
  onChange(listener: (socketPath: string) => void): () => void;
  clock: Clock;
  /** Give up waiting after this long (a plugin that never answers must not hold the start back forever). */
  timeoutMs: number;
  /** Stop waiting when aborted (the node is stopping). */
  signal?: AbortSignal;
}

/**
 * After a restart, waits until every restored plugin whose socket is still in
 * the directory has had its registration attempt settle (registered, or
 * failed), so restored instances are confirmed or dropped on facts: a stale
 * socket file of a crashed plugin must not keep its instance in the registry,
 * and a live one must not be dropped and re-added (a deregistered/registered
 * pair of events for nothing). Each change looks at its own socket only, so a
 * start-up with thousands of sockets costs O(1) per settled registration.
 */
export function waitForRestoredSockets(options: RestoreSettleOptions): Promise<void> {
  if (options.restored.size === 0 || options.signal?.aborted) return Promise.resolve();
  const remaining = new Set<string>();
  for (const socketPath of options.restored) {
    if (options.state(socketPath) === 'pending') remaining.add(socketPath);
  }
  if (remaining.size === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const finish = () => {
      options.clock.clearTimeout(timer);
      unsubscribe();
      options.signal?.removeEventListener('abort', finish);
      resolve();
    };
    const timer = options.clock.setTimeout(finish, options.timeoutMs);
    options.signal?.addEventListener('abort', finish, { once: true });
    const unsubscribe = options.onChange((socketPath) => {
      if (!remaining.has(socketPath) || options.state(socketPath) === 'pending') return;
      remaining.delete(socketPath);
      if (remaining.size === 0) finish();
    });
  });
}
