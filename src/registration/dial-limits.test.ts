import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createTempDir } from '../testing/index.js';
import { dialRegistration } from './dial.js';

it('a socket path longer than the unix limit fails its dial saying so', async () => {
  await using dir = createTempDir('berth-dial-');
  const path = dir.join(`${'x'.repeat(120)}.sock`);
  await assert.rejects(dialRegistration(path, { timeoutMs: 1000 }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'BERTH_DIAL_FAILED');
    assert.match(err.message, /the path is \d+ bytes, longer than the unix socket limit of 107/);
    return true;
  });
});
