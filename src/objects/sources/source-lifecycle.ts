import { type Lifecycle, LifecycleController, type LifecycleState } from '../../common/index.js';

export interface SourceLifecycleHooks {
  /** What start() waits for (the directory source's first scan); default: nothing. */
  ready?: () => Promise<unknown>;
  /** Releases clients, timers and open watches; called once, also when the source was never started. */
  release: () => Promise<void> | void;
}

/**
 * The lifecycle contract (common/lifecycle.ts) for object sources. A source
 * serves from creation, so a store may read it before start(); start()
 * resolves once the source is ready, and aborting its signal stops the
 * source. stop() is memoised; afterwards reads fail with BERTH_SHUT_DOWN.
 */
export function sourceLifecycle(hooks: SourceLifecycleHooks): Lifecycle {
  const controller = new LifecycleController({
    onStart: async () => {
      await hooks.ready?.();
    },
    onStop: () => hooks.release(),
  });
  return {
    get state(): LifecycleState {
      return controller.state;
    },
    start: (signal) => controller.start(signal),
    stop: () => controller.stop(),
    [Symbol.asyncDispose]: () => controller.stop(),
  };
}
