import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { applyDaemonJitTuning, DAEMON_INTERRUPT_BUDGET } from './jit-options.js';

const TUNING = fileURLToPath(new URL('./jit-options.js', import.meta.url));

/**
 * Calls of a small function until V8 asks to optimise it, in a fresh node
 * (with --allow-natives-syntax, so the child can read V8's tiering status),
 * after applying the daemon's tuning or not. A count, not a time: the same
 * on a loaded machine.
 */
function callsUntilTierUp(tuned: boolean, nodeFlags: string[] = []): number {
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
  return Number(run.stdout.trim());
}

describe('daemon JIT tuning', () => {
  it('raises the interrupt budget: V8 asks to optimise a hot function several times later', () => {
    const defaults = callsUntilTierUp(false);
    const tuned = callsUntilTierUp(true);
    assert.ok(defaults > 0 && defaults < 1e6, `default tier-up after ${defaults} calls`);
    // 400,000 against V8's 67,584: about six times the calls.
    assert.ok(tuned > defaults * 3, `tuned ${tuned} calls, default ${defaults}`);
  });

  it("leaves an operator's --interrupt-budget as it is", () => {
    assert.equal(applyDaemonJitTuning(['--interrupt-budget=67584']), 'operator');
    const operator = callsUntilTierUp(true, ['--interrupt-budget=67584']);
    const defaults = callsUntilTierUp(false);
    assert.ok(operator < defaults * 2, `operator's budget: ${operator} calls, default ${defaults}`);
    assert.equal(DAEMON_INTERRUPT_BUDGET, 400_000);
  });
});
