/**
 * Config edges: every duration within Node's timer range (at and past
 * 2^31 ms), zero refused where it means nothing, and only regular files of a
 * bounded size read as config (a FIFO and /dev/zero are refused at once).
 * `berth run` exits 2 naming the key.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { isBerthError } from '../../common/index.js';
import { BERTH_CLI, spawnModule } from '../../testing/harness/index.js';
import { createTempDir } from '../../testing/index.js';
import { CONFIG_FILE_MAX_BYTES, loadConfigFile, parseConfigDocument, resolveDaemonConfig } from './config.js';
import { MAX_TIMER_MS } from './duration.js';

const MAIN = BERTH_CLI;

function rejection(document: unknown): string {
  try {
    parseConfigDocument(document, '/x.yaml');
  } catch (err) {
    assert.ok(isBerthError(err, 'BERTH_CONFIG_INVALID'), String(err));
    return err.message;
  }
  assert.fail(`expected ${JSON.stringify(document)} to be rejected`);
}

/** Every duration key, as a path into the config document. */
const DURATION_KEYS = [
  ['resyncPeriod'],
  ['rescanInterval'],
  ['shutdownTimeout'],
  ['timeouts', 'dial'],
  ['timeouts', 'getInfo'],
  ['timeouts', 'notify'],
  ['liveness', 'period'],
  ['liveness', 'timeout'],
  ['objects', 'ttl'],
  ['api', 'headersTimeout'],
  ['api', 'idleTimeout'],
] as const;

function documentWith(path: readonly string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = path as [string, ...string[]];
  return { [head]: rest.length === 0 ? value : documentWith(rest, value) };
}

describe('config bounds', () => {
  it('accepts every duration up to 2^31 - 1 ms and refuses 2^31 ms and more, naming the key', () => {
    for (const key of DURATION_KEYS) {
      const name = key.join('.');
      assert.doesNotThrow(() => parseConfigDocument(documentWith(key, MAX_TIMER_MS), '/x.yaml'), name);
      for (const tooLong of [MAX_TIMER_MS + 1, 3_000_000_000, '600h']) {
        assert.match(rejection(documentWith(key, tooLong)), new RegExp(`${name}: must be below 2\\^31 ms`));
      }
    }
    const config = resolveDaemonConfig(parseConfigDocument({ timeouts: { dial: '596h31m23s' } }, '/x.yaml'));
    assert.equal(config.timeouts.dialMs, 2_147_483_000);
  });

  it('refuses zero where it means nothing and keeps it where it does (objects.ttl)', () => {
    for (const key of DURATION_KEYS) {
      const name = key.join('.');
      if (name === 'objects.ttl') {
        assert.doesNotThrow(() => parseConfigDocument(documentWith(key, 0), '/x.yaml'));
        continue;
      }
      assert.match(rejection(documentWith(key, 0)), new RegExp(`${name}: must be greater than 0`));
      assert.match(rejection(documentWith(key, '0.2ms')), new RegExp(`${name}: must be greater than 0`));
    }
  });

  it('names the key of every new api, tls and metrics setting it refuses', () => {
    assert.match(
      rejection({ api: { maxConnections: 0 } }),
      /api\.maxConnections: expected a number greater than 0/,
    );
    assert.match(
      rejection({ api: { maxEventStreams: 1.5 } }),
      /api\.maxEventStreams: expected a whole number/,
    );
    assert.match(
      rejection({ api: { allowedHosts: ['evil host'] } }),
      /api\.allowedHosts\[0\]: expected a DNS host name/,
    );
    assert.match(rejection({ tls: { cert: 'a.pem' } }), /tls\.key/);
    assert.match(rejection({ metrics: { anonymous: 'yes' } }), /metrics\.anonymous: expected true or false/);
  });

  it('reads only regular files within the size cap: a FIFO and /dev/zero are refused at once', (t) => {
    const dir = createTempDir('berth-cfg-');
    t.after(() => dir.remove());
    const fifo = dir.join('fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    assert.throws(() => loadConfigFile(fifo), /fifo\.yaml: not a regular file/);
    assert.throws(() => loadConfigFile('/dev/zero'), /\/dev\/zero: not a regular file/);
    assert.throws(() => loadConfigFile(dir.path), /not a regular file/);
    const big = dir.join('big.yaml');
    writeFileSync(big, `# ${'x'.repeat(CONFIG_FILE_MAX_BYTES)}\n`);
    assert.throws(() => loadConfigFile(big), /larger than 1048576 bytes/);
    const fine = dir.join('fine.yaml');
    writeFileSync(fine, 'logLevel: warn\n');
    assert.equal(loadConfigFile(fine).logLevel, 'warn');
  });

  it('berth run exits 2 with one line naming the key for a duration past the timer range', async (t) => {
    const dir = createTempDir('berth-cfg-');
    t.after(() => dir.remove());
    const config = dir.join('berth.yaml');
    writeFileSync(config, 'timeouts:\n  dial: 3000000000\n');
    const child = spawnModule(MAIN, ['run', '--data-dir', dir.join('data'), '--config', config]);
    let stderr = '';
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    assert.equal(code, 2);
    assert.equal(stderr.trimEnd().split('\n').length, 1, stderr);
    assert.match(stderr, /timeouts\.dial: must be below 2\^31 ms/);
  });
});
