import type { PluginInfo } from '../cache/types.js';
import { BerthError, type Clock, type ClockTimer, errorMessage, type Logger } from '../common/index.js';
import type { DialRegistration } from '../registration/types.js';
import type { LivenessOptions } from './types.js';

export const DEFAULT_LIVENESS: Readonly<LivenessOptions> = Object.freeze({
  periodMs: 10_000,
  timeoutMs: 5_000,
  failureThreshold: 3,
});

export interface LivenessProberOptions extends LivenessOptions {
  clock: Clock;
  logger: Logger;
  dial: DialRegistration;
  /** The registered plugins to probe. */
  registered: () => PluginInfo[];
  /** Sockets with an operation running are left alone (their registration is in flux). */
  isBusy: (socketPath: string) => boolean;
  /** `failureThreshold` consecutive probes of this generation failed. */
  onDead: (plugin: PluginInfo, error: BerthError, failures: number) => void;
}

export interface LivenessProber {
  start(): void;
  /** Stops the timer, aborts probes in flight and waits for the round. Idempotent. */
  stop(): Promise<void>;
  /** One probe round now (tests and the timer use it). */
  probeAll(): Promise<void>;
}

/**
 * Finds registered plugins whose socket file lingers but which no longer
 * answer (kubernetes#128696): every period each registered plugin gets a
 * fresh dial and a GetInfo, and after `failureThreshold` consecutive failures
 * of the same socket generation it is reported dead. The kubelet (v1.26-v1.30)
 * never notices such a plugin; a newer upstream monitor does something
 * similar (reference §2.9).
 */
export function createLivenessProber(options: LivenessProberOptions): LivenessProber {
  for (const key of ['periodMs', 'timeoutMs', 'failureThreshold'] as const) {
    const value = options[key];
    if (!Number.isFinite(value) || value <= 0) {
      throw new BerthError(
        'BERTH_INVALID_ARGUMENT',
        `plugin manager: liveness.${key} must be a positive number, got ${String(value)}`,
      );
    }
  }
  return new Prober(options);
}

class Prober implements LivenessProber {
  readonly #o: LivenessProberOptions;
  /** Consecutive failures per socket path, for one generation (uuid). */
  readonly #failures = new Map<string, { uuid: string; count: number }>();
  readonly #controller = new AbortController();
  #timer: ClockTimer | undefined;
  #round: Promise<void> | undefined;
  #state: 'idle' | 'running' | 'stopped' = 'idle';

  constructor(options: LivenessProberOptions) {
    this.#o = options;
  }

  start(): void {
    if (this.#state !== 'idle') return;
    this.#state = 'running';
    this.#arm();
  }

  async stop(): Promise<void> {
    if (this.#state !== 'stopped') {
      this.#state = 'stopped';
      if (this.#timer) this.#o.clock.clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#controller.abort(new BerthError('BERTH_SHUT_DOWN', 'liveness prober stopped'));
    }
    await this.#round;
  }

  probeAll(): Promise<void> {
    // Rounds never overlap: a slow round delays the next one.
    this.#round ??= this.#runRound().finally(() => {
      this.#round = undefined;
    });
    return this.#round;
  }

  #arm(): void {
    if (this.#state !== 'running') return;
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = undefined;
      void this.probeAll().finally(() => this.#arm());
    }, this.#o.periodMs);
  }

  async #runRound(): Promise<void> {
    const plugins = this.#o.registered();
    const present = new Set(plugins.map((p) => p.socketPath));
    for (const path of this.#failures.keys()) if (!present.has(path)) this.#failures.delete(path);
    await Promise.all(plugins.filter((p) => !this.#o.isBusy(p.socketPath)).map((p) => this.#probe(p)));
  }

  async #probe(plugin: PluginInfo): Promise<void> {
    const { dial, timeoutMs, logger } = this.#o;
    const signal = this.#controller.signal;
    if (signal.aborted) return;
    try {
      const conn = await dial(plugin.socketPath, { timeoutMs, signal });
      try {
        await conn.getInfo({ timeoutMs, signal });
      } finally {
        conn.close();
      }
      this.#failures.delete(plugin.socketPath);
    } catch (err) {
      if (signal.aborted) return;
      const previous = this.#failures.get(plugin.socketPath);
      const count = previous?.uuid === plugin.uuid ? previous.count + 1 : 1;
      this.#failures.set(plugin.socketPath, { uuid: plugin.uuid, count });
      logger.debug(
        { socketPath: plugin.socketPath, failures: count, err },
        `liveness probe of ${plugin.socketPath} failed (${count}/${this.#o.failureThreshold})`,
      );
      if (count < this.#o.failureThreshold) return;
      this.#failures.delete(plugin.socketPath);
      const error = new BerthError(
        'BERTH_LIVENESS_FAILED',
        `plugin ${plugin.name ?? ''} at socket ${plugin.socketPath} failed ${count} consecutive liveness probes; last error: ${errorMessage(err)}`,
        { cause: err, details: { socketPath: plugin.socketPath, failures: count } },
      );
      this.#o.onDead(plugin, error, count);
    }
  }
}
