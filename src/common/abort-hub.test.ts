import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { whenAborted } from './abort-hub.js';

describe('whenAborted', () => {
  it('runs each callback once, in the order added, through one listener on the signal', () => {
    const controller = new AbortController();
    const calls: string[] = [];
    whenAborted(controller.signal, () => calls.push('a'));
    const offB = whenAborted(controller.signal, () => calls.push('b'));
    whenAborted(controller.signal, () => calls.push('c'));
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    offB();
    offB();
    controller.abort();
    controller.abort();
    assert.deepEqual(calls, ['a', 'c']);
  });

  it('keeps one listener per signal however many callbacks come and go', () => {
    const controller = new AbortController();
    for (let i = 0; i < 1_000; i++) whenAborted(controller.signal, () => {})();
    const kept = whenAborted(controller.signal, () => {});
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    kept();
  });

  it('keeps signals apart, and a callback removed during the dispatch does not run', () => {
    const one = new AbortController();
    const two = new AbortController();
    const calls: string[] = [];
    let offLater = () => {};
    whenAborted(one.signal, () => {
      calls.push('one');
      offLater();
    });
    offLater = whenAborted(one.signal, () => calls.push('later'));
    whenAborted(two.signal, () => calls.push('two'));
    one.abort();
    // The dispatch took its list before it began: removal during it is like removal after it.
    assert.deepEqual(calls, ['one', 'later']);
    two.abort();
    assert.deepEqual(calls, ['one', 'later', 'two']);
  });

  it('without a signal, returns a remover that does nothing', () => {
    const off = whenAborted(undefined, () => assert.fail('called'));
    off();
  });

  it('a callback that throws does not stop the others, and its error is uncaught, as a listener’s is', () => {
    // In a child: node:test takes an uncaught exception as its own test's failure.
    const hub = fileURLToPath(new URL('./abort-hub.js', import.meta.url));
    const script = `
      const { whenAborted } = await import(${JSON.stringify(hub)});
      process.on('uncaughtException', (err) => { console.log('uncaught: ' + err.message); });
      const c = new AbortController();
      whenAborted(c.signal, () => { throw new Error('boom'); });
      whenAborted(c.signal, () => console.log('second ran'));
      c.abort();
      console.log('abort returned');
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(child.stdout.trim().split('\n'), ['second ran', 'abort returned', 'uncaught: boom']);
  });
});
