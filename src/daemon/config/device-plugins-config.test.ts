import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBerthError } from '../../common/index.js';
import { parseConfigDocument, resolveDaemonConfig } from './config.js';

describe('devicePlugins config', () => {
  it('defaults to <data-dir>/devices.db and <data-dir>/device-plugins, with the manager own grace period', () => {
    const config = resolveDaemonConfig({}, { dataDir: '/d' });
    assert.deepEqual(config.devicePlugins, { databasePath: '/d/devices.db', socketDir: '/d/device-plugins' });
  });

  it('takes a socket directory relative to the config file, false for none, and a grace period', () => {
    const file = parseConfigDocument(
      { devicePlugins: { socketDir: 'dp', gracePeriod: '30s' } },
      '/etc/berth.yaml',
    );
    const config = resolveDaemonConfig(file, { dataDir: '/d', config: '/etc/berth.yaml' });
    assert.deepEqual(config.devicePlugins, {
      databasePath: '/d/devices.db',
      socketDir: '/etc/dp',
      gracePeriodMs: 30_000,
    });
    const none = resolveDaemonConfig(parseConfigDocument({ devicePlugins: { socketDir: false } }, '/x'), {
      dataDir: '/d',
    });
    assert.equal(none.devicePlugins.socketDir, null);
  });

  it('names the bad key', () => {
    for (const [document, text] of [
      [{ devicePlugins: { gracePeriod: 'later' } }, 'devicePlugins.gracePeriod: expected a duration'],
      [{ devicePlugins: { socketDir: true } }, 'devicePlugins.socketDir: expected a directory path or false'],
      [{ devicePlugins: { grace: '1m' } }, 'devicePlugins.grace: unknown key'],
    ] as const) {
      assert.throws(
        () => parseConfigDocument(document, '/x.yaml'),
        (err: unknown) => isBerthError(err, 'BERTH_CONFIG_INVALID') && err.message.includes(text),
        text,
      );
    }
  });
});
