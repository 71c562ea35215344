import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { isBerthError } from '../common/index.js';
import { createTempDir } from '../testing/index.js';
import { describeTarget } from './api-client.js';
import { resolveApiTarget } from './api-target.js';

describe('API target with a token', () => {
  it('takes --token-file, else $BERTH_TOKEN, else the data directory token for its recorded address; none on the unix socket', async () => {
    await using dir = createTempDir('berth-target-');
    writeFileSync(dir.join('file-token'), 'from-file\n');
    writeFileSync(dir.join('api-token'), 'from-data-dir\n');
    writeFileSync(dir.join('api-address'), '127.0.0.1:7878\n');
    const env = { BERTH_TOKEN: 'from-env' };
    assert.deepEqual(resolveApiTarget({ api: '127.0.0.1:7878', tokenFile: dir.join('file-token') }, env), {
      tcp: { host: '127.0.0.1', port: 7878 },
      token: 'from-file',
      tokenFrom: '--token-file',
    });
    assert.equal(
      (resolveApiTarget({ api: '127.0.0.1:7878', dataDir: dir.path }, env) as { token?: string }).token,
      'from-env',
    );
    assert.equal(
      (resolveApiTarget({ api: '127.0.0.1:7878', dataDir: dir.path }, {}) as { token?: string }).token,
      'from-data-dir',
    );
    // Another port, another host: not the recorded address, so no token.
    for (const api of ['127.0.0.1:7879', 'node2:7878']) {
      assert.equal((resolveApiTarget({ api, dataDir: dir.path }, {}) as { token?: string }).token, undefined);
    }
    writeFileSync(dir.join('api-address'), '0.0.0.0:7878\n');
    for (const api of ['localhost:7878', '[::1]:7878']) {
      assert.equal(
        (resolveApiTarget({ api, dataDir: dir.path }, {}) as { token?: string }).token,
        'from-data-dir',
        api,
      );
    }
    assert.deepEqual(resolveApiTarget({ api: dir.join('berth.sock') }, env), {
      socketPath: dir.join('berth.sock'),
    });
  });

  it('talks HTTPS with --tls-ca or an https:// address, and names a missing file', async () => {
    await using dir = createTempDir('berth-target-');
    writeFileSync(dir.join('ca.pem'), 'PEM');
    const target = resolveApiTarget({ api: 'node1:7878', tlsCa: dir.join('ca.pem') }, { BERTH_TOKEN: 't' });
    assert.equal(describeTarget(target), 'https://node1:7878');
    assert.equal(describeTarget(resolveApiTarget({ api: 'https://node1:7878' }, {})), 'https://node1:7878');
    assert.throws(
      () => resolveApiTarget({ api: 'node1:7878', tokenFile: dir.join('missing') }, {}),
      (err: unknown) =>
        isBerthError(err, 'BERTH_USAGE') &&
        /--token-file: cannot read .*missing \(ENOENT\)/.test(err.message),
    );
  });
});
