import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { AbortScope } from './abort-scope.js';

describe('AbortScope', () => {
  it('1,000 operations put one listener on the long-lived signal, and none stays behind', async () => {
    const lifetime = new AbortController();
    const scope = new AbortScope(lifetime.signal);
    assert.equal(getEventListeners(lifetime.signal, 'abort').length, 1);
    await Promise.all(
      Array.from({ length: 1_000 }, () =>
        scope.run(async (signal) => {
          signal.addEventListener('abort', () => {}, { once: true });
          await Promise.resolve();
        }),
      ),
    );
    assert.equal(getEventListeners(lifetime.signal, 'abort').length, 1);
    assert.equal(scope.size, 0, 'every operation closed');
  });

  it('aborting the long-lived signal aborts every open operation with its reason, and later ones at once', () => {
    const lifetime = new AbortController();
    const scope = new AbortScope(lifetime.signal);
    const a = scope.open();
    const b = scope.open();
    b.close();
    lifetime.abort(new Error('stopping'));
    assert.equal(a.signal.aborted, true);
    assert.equal((a.signal.reason as Error).message, 'stopping');
    assert.equal(b.signal.aborted, false, 'a closed operation is no longer in the scope');
    assert.equal(scope.open().signal.aborted, true);
    assert.equal(scope.size, 0);
  });
});
