import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBerthError } from '../../common/index.js';
import { parseConfigDocument, resolveDaemonConfig } from './config.js';

describe('handlerOptions.DevicePlugin config', () => {
  it('is absent by default (the handler uses <data-dir>/device-plugins and its own grace period)', () => {
    const config = resolveDaemonConfig({}, { dataDir: '/d' });
    assert.equal(config.handlerOptions.DevicePlugin, undefined);
  });

  it('takes a socket directory relative to the config file, false for none, and a grace period', () => {
    const file = parseConfigDocument(
      { handlerOptions: { DevicePlugin: { socketDir: 'dp', gracePeriod: '30s' } } },
      '/etc/berth.yaml',
    );
    const config = resolveDaemonConfig(file, { dataDir: '/d', config: '/etc/berth.yaml' });
    assert.deepEqual(config.handlerOptions.DevicePlugin, { socketDir: '/etc/dp', gracePeriodMs: 30_000 });
    const none = resolveDaemonConfig(
      parseConfigDocument({ handlerOptions: { DevicePlugin: { socketDir: false } } }, '/x'),
      { dataDir: '/d' },
    );
    assert.deepEqual(none.handlerOptions.DevicePlugin, { socketDir: false });
  });

  it('names the bad key', () => {
    for (const [document, text] of [
      [
        { handlerOptions: { DevicePlugin: { gracePeriod: 'later' } } },
        'handlerOptions.DevicePlugin.gracePeriod: expected a duration',
      ],
      [
        { handlerOptions: { DevicePlugin: { socketDir: true } } },
        'handlerOptions.DevicePlugin.socketDir: expected a directory path or false',
      ],
      [
        { handlerOptions: { DevicePlugin: { grace: '1m' } } },
        'handlerOptions.DevicePlugin.grace: unknown key',
      ],
    ] as const) {
      assert.throws(
        () => parseConfigDocument(document, '/x.yaml'),
        (err: unknown) => isBerthError(err, 'BERTH_CONFIG_INVALID') && err.message.includes(text),
        text,
      );
    }
  });
});
