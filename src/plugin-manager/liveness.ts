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
  /** Sockets declared dead whose file is still there: probed for recovery. */
  deadSockets?: () => string[];
  /** A dead socket answered GetInfo again. */
  onAlive?: (socketPath: string) => void;
}

/** A dead socket is re-probed after one period, then the interval doubles up to this many periods. */
export const RECOVERY_MAX_PERIODS = 32;

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
 *
 * A dead socket whose file lingers is also probed for recovery, as the
 * upstream monitor does, but on a doubling interval (1 to 32 periods): a
 * wedged plugin costs a dial each time, and grpc-js holds such a connection
 * until the plugin closes it. When it answers again, `onAlive` is called.
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
  /** Per dead socket: when to probe it next, and the interval after that. */
  readonly #recovery = new Map<string, { nextAt: number; intervalMs: number }>();
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
    await Promise.all([
      ...plugins.filter((p) => !this.#o.isBusy(p.socketPath)).map((p) => this.#probe(p)),
      ...this.#dueForRecovery().map((path) => this.#probeRecovery(path)),
    ]);
  }

  #dueForRecovery(): string[] {
    const dead = new Set(this.#o.deadSockets?.() ?? []);
    for (const path of this.#recovery.keys()) if (!dead.has(path)) this.#recovery.delete(path);
    const now = this.#o.clock.now();
    const due: string[] = [];
    for (const path of dead) {
      const schedule = this.#recovery.get(path);
      if (schedule === undefined) {
        this.#recovery.set(path, { nextAt: now + this.#o.periodMs, intervalMs: this.#o.periodMs });
      } else if (now >= schedule.nextAt) {
        due.push(path);
      }
    }
    return due;
  }

  async #probeRecovery(socketPath: string): Promise<void> {
    const signal = this.#controller.signal;
    try {
      await this.#getInfo(socketPath);
    } catch (err) {
      if (signal.aborted) return;
      const schedule = this.#recovery.get(socketPath);
      if (schedule === undefined) return;
      schedule.intervalMs = Math.min(schedule.intervalMs * 2, this.#o.periodMs * RECOVERY_MAX_PERIODS);
      schedule.nextAt = this.#o.clock.now() + schedule.intervalMs;
      this.#o.logger.debug(
        { socketPath, err, nextInMs: schedule.intervalMs },
        'dead plugin still not answering',
      );
      return;
    }
    if (signal.aborted || !this.#recovery.delete(socketPath)) return;
    this.#o.onAlive?.(socketPath);
  }

  /** A fresh dial and a GetInfo, both within timeoutMs; throws on failure. */
  async #getInfo(socketPath: string): Promise<void> {
    const { dial, timeoutMs } = this.#o;
    const signal = this.#controller.signal;
    const conn = await dial(socketPath, { timeoutMs, signal });
    try {
      await conn.getInfo({ timeoutMs, signal });
    } finally {
      conn.close();
    }
  }

  async #probe(plugin: PluginInfo): Promise<void> {
    const { logger } = this.#o;
    const signal = this.#controller.signal;
    if (signal.aborted) return;
    try {
      await this.#getInfo(plugin.socketPath);
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
