/**
 * `backoff:` in the config file reaches the registration retry as one
 * BackoffSetting (the cap is the point: "retry at most every 30 s").
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBerthError } from '../../common/index.js';
import { DEFAULT_EXECUTOR_BACKOFF } from '../../executor/index.js';
import { parseConfigDocument, resolveDaemonConfig } from './config.js';

const resolve = (document: unknown) =>
  resolveDaemonConfig(
    parseConfigDocument(document, 'berth.yaml'),
    {},
    { env: {}, home: '/home/u', cwd: '/w' },
  );

describe('backoff config', () => {
  it("defaults to the executor's own policy", () => {
    assert.deepEqual(resolve({}).backoff, { ...DEFAULT_EXECUTOR_BACKOFF });
  });

  it('takes a cap, a first delay and a factor, each over the default', () => {
    assert.deepEqual(resolve({ backoff: { max: '30s' } }).backoff, {
      initialMs: DEFAULT_EXECUTOR_BACKOFF.initialMs,
      maxMs: 30_000,
      factor: DEFAULT_EXECUTOR_BACKOFF.factor,
    });
    assert.deepEqual(resolve({ backoff: { initial: '1s', max: '1m', factor: 3 } }).backoff, {
      initialMs: 1_000,
      maxMs: 60_000,
      factor: 3,
    });
  });

  it('refuses a cap below the first delay, naming the key', () => {
    assert.throws(
      () => resolve({ backoff: { initial: '10s', max: '1s' } }),
      (err: unknown) => isBerthError(err, 'BERTH_CONFIG_INVALID') && /^backoff\.max: /.test(err.message),
    );
  });

  it('refuses a factor outside 1..10 and unknown keys, naming the path', () => {
    assert.throws(() => resolve({ backoff: { factor: 0.5 } }), /backoff\.factor/);
    assert.throws(() => resolve({ backoff: { factor: 100 } }), /backoff\.factor/);
    assert.throws(() => resolve({ backoff: { cap: '1s' } }), /backoff/);
    assert.throws(() => resolve({ backoff: { max: '0s' } }), /backoff\.max/);
  });
});
