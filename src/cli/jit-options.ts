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
 * The newest V8 with an `--interrupt-budget` flag: node 20's 11.3. V8 11.8
 * (node 21) and later tier up on invocation counts instead and do not know
 * the flag: setting it there prints "Error: unrecognized flag" on stderr,
 * which broke a JSON log's first line, and changed nothing. Raising those
 * counts sixfold instead (`--invocation-count-for-turbofan=18000
 * --invocation-count-for-maglev=2400`) measured no gain on node 22: a storm
 * of 1,000 took 0.96 / 1.00 / 1.22 CPU-s without and 1.05 / 1.14 / 1.17 with,
 * interleaved (bench/results.md). So newer V8s run with their defaults.
 */
const LAST_V8_WITH_INTERRUPT_BUDGET: readonly [number, number] = [11, 3];

/** True for a V8 version ("11.3.244.8-node.38") that has `--interrupt-budget`. */
export function hasInterruptBudgetFlag(v8Version: string): boolean {
  const [major = Number.NaN, minor = Number.NaN] = v8Version.split('.', 2).map(Number);
  const [lastMajor, lastMinor] = LAST_V8_WITH_INTERRUPT_BUDGET;
  return major < lastMajor || (major === lastMajor && minor <= lastMinor);
}

/**
 * Sets the daemon's interrupt budget where V8 has one, unless the operator
 * chose it on node's command line (`node --interrupt-budget=67584 berth run`
 * restores V8's). Returns the budget in force, 'operator', or 'v8-default'
 * on a V8 without the flag (node 21 and later).
 *
 * Call it once the process has loaded what it needs and written its code
 * cache: V8 stamps code caches with a hash of its flags, and a flag changed
 * at run time makes every cache made before it miss, node's cache of its own
 * built-in modules included (a start that set it first loaded node's modules
 * about 20 ms slower, and `berth run`'s ready time rose by as much).
 */
export function applyDaemonJitTuning(
  execArgv: readonly string[] = process.execArgv,
  v8Version: string = process.versions.v8,
): number | 'operator' | 'v8-default' {
  if (execArgv.some((arg) => arg.startsWith('--interrupt-budget') || arg.startsWith('--interrupt_budget')))
    return 'operator';
  if (!hasInterruptBudgetFlag(v8Version)) return 'v8-default';
  setFlagsFromString(`--interrupt-budget=${DAEMON_INTERRUPT_BUDGET}`);
  return DAEMON_INTERRUPT_BUDGET;
}
