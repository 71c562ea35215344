/**
 * 'abort' callbacks without an EventTarget listener each.
 *
 * Node's EventTarget is costly per listener: addEventListener and
 * removeEventListener validate their target and options and keep a linked
 * list, about 3 µs a pair when the signal is fresh. A registration adds and
 * removes five on its attempt's signal (the connect, the HTTP/2 start, the
 * slot wait, GetInfo, Notify): in a CPU profile of a storm of 1,000 that was
 * 100 ms of berth's 1.4 CPU-s. Here the first callback on a signal adds the
 * one real listener, which stays for the signal's life, and the callbacks
 * are entries of a Set: adding and removing one is a hash operation. The
 * WeakMap lets a signal that is dropped take its callbacks with it.
 *
 * As with addEventListener, a signal that already aborted never calls a
 * callback added after: callers check `signal.aborted` first.
 */
const hubs = new WeakMap<AbortSignal, Set<() => void>>();

const NOTHING_TO_REMOVE = () => {};

/** Calls `callback` once when `signal` aborts; the returned function takes it back (idempotent). */
export function whenAborted(signal: AbortSignal | undefined, callback: () => void): () => void {
  if (signal === undefined) return NOTHING_TO_REMOVE;
  let callbacks = hubs.get(signal);
  if (callbacks === undefined) {
    const created = new Set<() => void>();
    callbacks = created;
    hubs.set(signal, created);
    signal.addEventListener('abort', () => dispatch(signal, created), { once: true });
  }
  const own = callbacks;
  own.add(callback);
  return () => void own.delete(callback);
}

function dispatch(signal: AbortSignal, callbacks: Set<() => void>): void {
  hubs.delete(signal);
  const due = [...callbacks];
  callbacks.clear();
  for (const callback of due) {
    try {
      callback();
    } catch (err) {
      // As a throwing EventTarget listener does: the others still run, and the error is uncaught.
      process.nextTick(() => {
        throw err;
      });
    }
  }
}
