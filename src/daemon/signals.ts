import type { Clock, Logger } from '../common/index.js';
import { formatConfigDuration } from './config/duration.js';

export interface ShutdownSignalsOptions {
  /** The graceful stop. */
  stop(): Promise<void>;
  /** How long the graceful stop may take before the process exits anyway (code 1). */
  timeoutMs: number;
  /** Ends the process; `berth run` passes process.exit. */
  exit(code: number): void;
  clock: Clock;
  logger: Logger;
  /** Where signals come from; default the process. */
  emitter?: Pick<NodeJS.Process, 'on' | 'off'>;
  signals?: NodeJS.Signals[];
}

/**
 * SIGINT/SIGTERM: stop gracefully within the deadline, then exit 0 (1 if the
 * stop failed or ran out of time). A second signal exits at once with 1, for
 * an operator who does not want to wait. Returns a function that removes the handlers.
 */
export function handleShutdownSignals(options: ShutdownSignalsOptions): () => void {
  const emitter = options.emitter ?? process;
  const signals = options.signals ?? ['SIGINT', 'SIGTERM'];
  let stopping = false;

  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      options.logger.warn({ signal }, 'second signal: exiting without waiting for a graceful stop');
      options.exit(1);
      return;
    }
    stopping = true;
    options.logger.info(
      { signal },
      `stopping (deadline ${formatConfigDuration(options.timeoutMs)}; signal again to force)`,
    );
    const deadline = options.clock.setTimeout(() => {
      options.logger.error(`did not stop within ${formatConfigDuration(options.timeoutMs)}; exiting`);
      options.exit(1);
    }, options.timeoutMs);
    options.stop().then(
      () => {
        options.clock.clearTimeout(deadline);
        options.exit(0);
      },
      (err: unknown) => {
        options.clock.clearTimeout(deadline);
        options.logger.error({ err }, 'stopping failed');
        options.exit(1);
      },
    );
  };

  for (const signal of signals) emitter.on(signal, onSignal);
  return () => {
    for (const signal of signals) emitter.off(signal, onSignal);
  };
}

export interface ReloadSignalOptions {
  reload(): void;
  emitter?: Pick<NodeJS.Process, 'on' | 'off'>;
}

/** SIGHUP: reload the config (config-reload.ts). Returns a function that removes the handler. */
export function handleReloadSignal(options: ReloadSignalOptions): () => void {
  const emitter = options.emitter ?? process;
  const onSignal = () => options.reload();
  emitter.on('SIGHUP', onSignal);
  return () => {
    emitter.off('SIGHUP', onSignal);
  };
}
