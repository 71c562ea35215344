import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TurnBudget } from './time-slice.js';

/** Counts event-loop turns (check phases) until stopped. */
function turnCounter(): { readonly turn: number; stop(): void } {
  let turn = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turn += 1;
    setImmediate(tick);
  };
  setImmediate(tick);
  return {
    get turn() {
      return turn;
    },
    stop() {
      running = false;
    },
  };
}

const immediates = () => process.getActiveResourcesInfo().filter((r) => r === 'Immediate').length;

describe('TurnBudget', () => {
  it('lets callers go on at once while the turn has time', () => {
    const budget = new TurnBudget(60_000);
    for (let i = 0; i < 100; i++) assert.equal(budget.pass(), undefined);
    assert.equal(budget.spent(), false);
    assert.equal(budget.waiting, 0);
  });

  it('defers callers past the budget to later turns, in arrival order, at least one a turn', async () => {
    const budget = new TurnBudget(0);
    const turns = turnCounter();
    const resumed: Array<{ id: number; turn: number }> = [];
    const waits = [1, 2, 3, 4].map((id) => {
      const wait = budget.pass();
      assert.ok(wait instanceof Promise, `caller ${id} waits: the turn has no time`);
      return wait.then(() => resumed.push({ id, turn: turns.turn }));
    });
    assert.equal(budget.waiting, 4);
    assert.equal(budget.spent(), true, 'spent while callers wait');
    await Promise.resolve();
    assert.equal(resumed.length, 0, 'nobody resumes in the turn that deferred it');
    await Promise.all(waits);
    turns.stop();
    assert.deepEqual(
      resumed.map((r) => r.id),
      [1, 2, 3, 4],
    );
    for (let i = 1; i < resumed.length; i++) {
      assert.ok(
        (resumed[i]?.turn ?? 0) > (resumed[i - 1]?.turn ?? 0),
        `with no time a turn resumes one caller: ${JSON.stringify(resumed)}`,
      );
    }
    assert.equal(budget.waiting, 0);
  });

  it('a caller that arrives while others wait queues behind them, even with time left', async () => {
    const budget = new TurnBudget(0);
    const order: string[] = [];
    const first = budget.pass();
    assert.ok(first);
    const done = first.then(() => order.push('first'));
    // A generous budget would let a newcomer go on at once, but not past someone waiting.
    const late = budget.pass();
    assert.ok(late instanceof Promise);
    await Promise.all([done, late.then(() => order.push('late'))]);
    assert.deepEqual(order, ['first', 'late']);
  });

  it('schedules nothing once nothing passes for a turn', async () => {
    const turns = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    await turns(3); // what the test runner had scheduled is done
    const before = immediates();
    const budget = new TurnBudget(60_000);
    assert.equal(budget.pass(), undefined);
    assert.ok(immediates() > before, 'a turn with a pass keeps the clock going');
    await turns(3);
    assert.equal(immediates(), before);
  });
});
