import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { applyDaemonJitTuning, DAEMON_INTERRUPT_BUDGET, hasInterruptBudgetFlag } from './jit-options.js';

const TUNING = fileURLToPath(new URL('./jit-options.js', import.meta.url));

/**
 * Calls of a small function until V8 asks to optimise it, in a fresh node
 * (with --allow-natives-syntax, so the child can read V8's tiering status),
 * after applying the daemon's tuning or not. A count, not a time: the same
 * on a loaded machine.
 */
function callsUntilTierUp(tuned: boolean, nodeFlags: string[] = []): { calls: number; stderr: string } {
  const script = `
    const { applyDaemonJitTuning } = await import(${JSON.stringify(TUNING)});
    if (${tuned}) applyDaemonJitTuning();
    function work(x) { let s = 0; for (let i = 0; i < 10; i++) s += x * i; return s; }
    // V8's status bits: optimised (4), marked for optimisation (8), marked for concurrent optimisation (9),
    // optimising concurrently (10).
    const ASKED = (1 << 4) | (1 << 8) | (1 << 9) | (1 << 10);
    let n = 0;
    while (n < 1e6) {
      work(n++);
      if (%GetOptimizationStatus(work) & ASKED) break;
    }
    console.log(n);`;
  const run = spawnSync(
    process.execPath,
    ['--allow-natives-syntax', ...nodeFlags, '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  );
  assert.equal(run.status, 0, run.stderr);
  return { calls: Number(run.stdout.trim()), stderr: run.stderr };
}

/** This node's V8 has `--interrupt-budget` (node 20); later ones do not (jit-options.ts). */
const HAS_FLAG = hasInterruptBudgetFlag(process.versions.v8);

describe('daemon JIT tuning', () => {
  it('knows which V8 versions have --interrupt-budget: 11.3 (node 20) and older, not 11.8 (node 21) or later', () => {
    assert.equal(hasInterruptBudgetFlag('11.3.244.8-node.38'), true);
    assert.equal(hasInterruptBudgetFlag('10.2.154.26-node.26'), true);
    assert.equal(hasInterruptBudgetFlag('11.8.172.17-node.20'), false);
    assert.equal(hasInterruptBudgetFlag('12.4.254.21-node.57'), false);
    assert.equal(hasInterruptBudgetFlag('13.6.233.17-node.63'), false);
    assert.equal(hasInterruptBudgetFlag('not a version'), false);
    assert.equal(applyDaemonJitTuning([], '12.4.254.21-node.57'), 'v8-default');
  });

  it(
    HAS_FLAG
      ? 'raises the interrupt budget: V8 asks to optimise a hot function several times later'
      : "leaves a V8 without --interrupt-budget as it is, and prints nothing (no 'unrecognized flag')",
    () => {
      const defaults = callsUntilTierUp(false);
      const tuned = callsUntilTierUp(true);
      assert.ok(defaults.calls > 0 && defaults.calls < 1e6, `default tier-up after ${defaults.calls} calls`);
      // Anything on stderr would be a line in front of the daemon's first JSON log line.
      assert.equal(tuned.stderr, '');
      if (HAS_FLAG) {
        // 400,000 against V8's 67,584: about six times the calls.
        assert.ok(tuned.calls > defaults.calls * 3, `tuned ${tuned.calls} calls, default ${defaults.calls}`);
      } else {
        assert.equal(applyDaemonJitTuning([]), 'v8-default');
        assert.equal(tuned.calls, defaults.calls);
      }
    },
  );

  it("leaves an operator's --interrupt-budget as it is", () => {
    assert.equal(applyDaemonJitTuning(['--interrupt-budget=67584']), 'operator');
    assert.equal(DAEMON_INTERRUPT_BUDGET, 400_000);
    // A V8 without the flag refuses it on node's command line: there is no operator's value to keep.
    if (!HAS_FLAG) return;
    const operator = callsUntilTierUp(true, ['--interrupt-budget=67584']);
    const defaults = callsUntilTierUp(false);
    assert.ok(
      operator.calls < defaults.calls * 2,
      `operator's budget: ${operator.calls} calls, default ${defaults.calls}`,
    );
  });
});
