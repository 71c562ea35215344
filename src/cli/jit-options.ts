import { setFlagsFromString } from 'node:v8';

/**
 * V8's interrupt budget for a `berth run` process: how much bytecode a
 * function runs between V8's checks for whether to optimise it (V8's default
 * is 67,584). berth's work comes in bursts (a storm of plugins, then hours of
 * idle keepalives), and with the default a fresh daemon spends about as much
 * CPU on its compiler threads optimising the registration path as it spends
 * registering: a storm of 1,000 took 0.86–1.03 CPU-s, 0.69–0.80 with this
 * budget, on two cores shared with the plugins; storms of 5,000 and start-up
 * did not change beyond the noise (bench/results.md). Functions
 * that stay hot are still optimised, a few thousand calls later.
 */
export const DAEMON_INTERRUPT_BUDGET = 400_000;

/**
 * Sets the daemon's interrupt budget, unless the operator chose one on node's
 * command line (`node --interrupt-budget=67584 berth run` restores V8's).
 * Returns the budget in force, or 'operator'.
 *
 * Call it once the process has loaded what it needs and written its code
 * cache: V8 stamps code caches with a hash of its flags, and a flag changed
 * at run time makes every cache made before it miss, node's cache of its own
 * built-in modules included (a start that set it first loaded node's modules
 * about 20 ms slower, and `berth run`'s ready time rose by as much).
 */
export function applyDaemonJitTuning(execArgv: readonly string[] = process.execArgv): number | 'operator' {
  if (execArgv.some((arg) => arg.startsWith('--interrupt-budget') || arg.startsWith('--interrupt_budget')))
    return 'operator';
  setFlagsFromString(`--interrupt-budget=${DAEMON_INTERRUPT_BUDGET}`);
  return DAEMON_INTERRUPT_BUDGET;
}
