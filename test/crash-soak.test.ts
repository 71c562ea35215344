/**
 * A few rounds of the crash soak in `npm test` (the full 50 rounds are `npm run
 * soak`): kill -9 of `berth run` during plugin churn; after each restart the
 * registry equals the live sockets, without duplicates, and SQLite's
 * integrity check is ok.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCrashSoak } from './fixtures/crash-soak.js';

test('kill -9 during churn, 3 rounds: registry == live sockets, no duplicates, integrity ok', async () => {
  const result = await runCrashSoak({ rounds: 3 });
  assert.equal(result.convergeMs.length, 3);
});
