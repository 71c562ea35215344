import type { Clock, Logger } from '../common/index.js';

/** A long-lived child of the daemon, as its teardown sees it: a Lifecycle, named for the logs. */
export interface StoppableChild {
  readonly name: string;
  stop(): Promise<void> | void;
}

export interface StopInReverseOptions {
  clock: Clock;
  logger: Logger;
  /** Clock time by which everything should have stopped. */
  deadline: number;
}

export interface StopReport {
  /** Children whose stop() threw or rejected (logged; the rest were still stopped). */
  failed: string[];
  /** Children still stopping when the deadline passed (not waited for any longer). */
  overran: string[];
}

/**
 * Stops `children` (given in start order) newest first, one at a time, under
 * one deadline. Each child is isolated: one that fails is logged and the next
 * is stopped anyway, so the state database is always closed. Once the deadline
 * has passed, every remaining child is still asked to stop but no longer
 * waited for, so a stuck component cannot hold the daemon past its deadline.
 */
export async function stopInReverse(
  children: readonly StoppableChild[],
  options: StopInReverseOptions,
): Promise<StopReport> {
  const { clock, logger, deadline } = options;
  const report: StopReport = { failed: [], overran: [] };
  for (const child of [...children].reverse()) {
    const began = clock.now();
    let stopping: Promise<void>;
    try {
      stopping = Promise.resolve(child.stop());
    } catch (err) {
      stopping = Promise.reject(err);
    }
    const outcome = await settleBy(stopping, clock, deadline - began);
    if (outcome.kind === 'stopped') {
      logger.debug({ ms: clock.now() - began }, `stopped ${child.name}`);
    } else if (outcome.kind === 'failed') {
      report.failed.push(child.name);
      logger.warn({ err: outcome.err }, `stopping ${child.name} failed`);
    } else {
      report.overran.push(child.name);
      // Its stop keeps running; a late failure is still worth a line.
      stopping.catch((err: unknown) => logger.warn({ err }, `stopping ${child.name} failed`));
      logger.warn({}, `${child.name} did not stop before the shutdown deadline; moving on`);
    }
  }
  return report;
}

type Outcome = { kind: 'stopped' } | { kind: 'failed'; err: unknown } | { kind: 'overran' };

function settleBy(stopping: Promise<void>, clock: Clock, remainingMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const timer = clock.setTimeout(() => resolve({ kind: 'overran' }), Math.max(0, remainingMs));
    stopping.then(
      () => {
        clock.clearTimeout(timer);
        resolve({ kind: 'stopped' });
      },
      (err: unknown) => {
        clock.clearTimeout(timer);
        resolve({ kind: 'failed', err });
      },
    );
  });
}
