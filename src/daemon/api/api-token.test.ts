import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createRecordingLogger } from '../../testing/harness/index.js';
import { createTempDir } from '../../testing/index.js';
import { ensureApiToken, readApiTokenFile } from './api-token.js';
import { tokenMatches } from './tcp-access.js';

describe('API token', () => {
  it('is created once, 0600, and reused', async () => {
    await using dir = createTempDir('berth-token-');
    const path = dir.join('api-token');
    const token = ensureApiToken(path);
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(ensureApiToken(path), token);
    assert.equal(readApiTokenFile(path), token);
  });

  it('tightens a token file others can read, with a warning', async () => {
    await using dir = createTempDir('berth-token-');
    const path = dir.join('api-token');
    writeFileSync(path, 'a-token-of-enough-length-0123456789\n');
    chmodSync(path, 0o644);
    const logger = createRecordingLogger();
    assert.equal(ensureApiToken(path, logger), 'a-token-of-enough-length-0123456789');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.ok(logger.records.some((r) => r.level === 'warn' && /readable by others/.test(r.message)));
  });

  it('refuses a symlink planted at its path and a file that is not a token', async () => {
    await using dir = createTempDir('berth-token-');
    writeFileSync(dir.join('elsewhere'), 'x'.repeat(40));
    symlinkSync(dir.join('elsewhere'), dir.join('link'));
    assert.throws(() => ensureApiToken(dir.join('link')), /it is a symlink/);
    writeFileSync(dir.join('short'), 'abc');
    assert.throws(() => ensureApiToken(dir.join('short')), /at least 16 printable characters/);
    assert.equal(readFileSync(dir.join('elsewhere'), 'utf8'), 'x'.repeat(40));
  });

  it('matches only the exact bearer token', () => {
    const token = 'correct-horse-battery-staple-0123';
    assert.equal(tokenMatches(`Bearer ${token}`, token), true);
    assert.equal(tokenMatches(`bearer  ${token}`, token), true);
    assert.equal(tokenMatches(`Bearer ${token}x`, token), false);
    assert.equal(tokenMatches(`Bearer ${token.slice(1)}`, token), false);
    assert.equal(tokenMatches(token, token), false);
    assert.equal(tokenMatches(undefined, token), false);
    assert.equal(tokenMatches([`Bearer ${token}`], token), false);
  });
});
