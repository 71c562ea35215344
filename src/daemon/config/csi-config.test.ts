import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CSI_DEFAULTS, csiOptions } from '../../handlers/csi/index.js';
import { parseConfigDocument, resolveDaemonConfig } from './config.js';

describe('handlerOptions.CSIPlugin config', () => {
  it('resolves the mount root against the config file and durations to ms', () => {
    const file = parseConfigDocument(
      {
        handlerOptions: {
          CSIPlugin: { mountRoot: 'csi-mounts', operationTimeout: '90s', callTimeout: '10s' },
        },
      },
      '/etc/berth.yaml',
    );
    const config = resolveDaemonConfig(file, { dataDir: '/d', config: '/etc/berth.yaml' });
    assert.deepEqual(config.handlerOptions.CSIPlugin, {
      mountRoot: '/etc/csi-mounts',
      operationTimeoutMs: 90_000,
      callTimeoutMs: 10_000,
    });
    assert.deepEqual(csiOptions(config.handlerOptions.CSIPlugin ?? {}), {
      mountRoot: '/etc/csi-mounts',
      operationTimeoutMs: 90_000,
      callTimeoutMs: 10_000,
    });
  });

  it('leaves the defaults to the handler: <data-dir>/csi, 5m per operation, 2m per call', () => {
    assert.deepEqual(csiOptions({}), {
      mountRoot: undefined,
      operationTimeoutMs: CSI_DEFAULTS.operationTimeoutMs,
      callTimeoutMs: CSI_DEFAULTS.callTimeoutMs,
    });
    assert.equal(CSI_DEFAULTS.operationTimeoutMs, 300_000);
    assert.equal(CSI_DEFAULTS.mountRootDirName, 'csi');
  });

  it('names the bad key', () => {
    assert.throws(
      () => parseConfigDocument({ handlerOptions: { CSIPlugin: { mountRoot: '' } } }, '/x'),
      /handlerOptions\.CSIPlugin\.mountRoot: must not be empty/,
    );
    assert.throws(
      () => parseConfigDocument({ handlerOptions: { CSIPlugin: { operationTimeout: 'soon' } } }, '/x'),
      /handlerOptions\.CSIPlugin\.operationTimeout: expected a duration/,
    );
  });
});
