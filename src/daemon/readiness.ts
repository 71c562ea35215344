import { statSync } from 'node:fs';
import { type Clock, type ClockTimer, errorMessage, type Logger } from '../common/index.js';
import type { ReadinessCheckView, ReadinessView } from './api/wire-types.js';

/**
 * Why the plugins directory cannot serve plugins right now (undefined when it
 * can): gone, or replaced by a file.
 */
export function pluginsDirProblem(pluginsDir: string): string | undefined {
  try {
    if (!statSync(pluginsDir).isDirectory()) return `the plugins directory ${pluginsDir} is not a directory`;
    return undefined;
  } catch (err) {
    return `the plugins directory ${pluginsDir} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}

/** One named condition of readiness: undefined when it holds, else why not. */
export interface ReadinessCheck {
  name: string;
  problem(): string | undefined;
}

export type ReadinessReport = ReadinessView;

export interface ReadinessOptions {
  checks: readonly ReadinessCheck[];
  clock: Clock;
  logger: Logger;
  /** How often readiness is re-evaluated while someone listens for changes (ms). */
  pollMs?: number;
}

/**
 * berth's one notion of ready: `/readyz`, `/readyz?verbose` and `/v1/status`
 * all read `evaluate()`, so they cannot disagree. Checks are cheap (a stat,
 * reading in-memory state) and run on each read. `onChange` listeners (e.g. a
 * service manager's readiness notification) hear each flip; while any
 * listen, readiness is also evaluated every `pollMs`, so a flip is heard
 * even when nobody asks.
 */
export class Readiness {
  readonly #checks: readonly ReadinessCheck[];
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #pollMs: number;
  readonly #listeners = new Set<(report: ReadinessReport) => void>();
  #last: boolean | undefined;
  #timer: ClockTimer | undefined;

  constructor(options: ReadinessOptions) {
    this.#checks = options.checks;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#pollMs = options.pollMs ?? 1000;
  }

  evaluate(): ReadinessReport {
    const checks: ReadinessCheckView[] = this.#checks.map((check) => {
      let problem: string | undefined;
      try {
        problem = check.problem();
      } catch (err) {
        problem = `the check failed: ${errorMessage(err)}`;
      }
      return problem === undefined
        ? { name: check.name, ok: true }
        : { name: check.name, ok: false, reason: problem };
    });
    const report = { ready: checks.every((check) => check.ok), checks };
    if (report.ready !== this.#last) {
      const first = this.#last === undefined;
      this.#last = report.ready;
      if (!first || report.ready) this.#announce(report);
    }
    return report;
  }

  /** The first failing check's reason, or undefined when ready. */
  problem(): string | undefined {
    return this.evaluate().checks.find((check) => !check.ok)?.reason;
  }

  /** Calls `listener` on each change of `ready` from now on; returns an unsubscribe. */
  onChange(listener: (report: ReadinessReport) => void): () => void {
    this.#listeners.add(listener);
    this.#poll();
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.stop();
    };
  }

  /** Stops the polling (listeners stay registered but hear nothing more). */
  stop(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #poll(): void {
    if (this.#timer !== undefined) return;
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      if (this.#listeners.size === 0) return;
      this.evaluate();
      this.#poll();
    }, this.#pollMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  #announce(report: ReadinessReport): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(report);
      } catch (err) {
        this.#logger.error({ err: errorMessage(err) }, 'readiness listener failed');
      }
    }
  }
}
