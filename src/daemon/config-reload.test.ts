import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BerthError } from '../common/index.js';
import { createRecordingLogger } from '../testing/harness/index.js';
import { resolveDaemonConfig } from './config/config.js';
import { planReload, reloadConfig } from './config-reload.js';

const base = () =>
  resolveDaemonConfig(
    { handlers: [{ type: 'example.com/a', versions: ['v1'] }] },
    { dataDir: '/d' },
    { env: {} },
  );

describe('config reload (SIGHUP)', () => {
  it('applies the log level and version lists, and names the rest as needing a restart', () => {
    const running = base();
    const next = resolveDaemonConfig(
      {
        logLevel: 'debug',
        handlers: [{ type: 'example.com/a', versions: ['v1', 'v2'] }],
        shutdownTimeout: 5000,
      },
      { dataDir: '/d' },
      { env: {} },
    );
    assert.deepEqual(planReload(running, next), {
      applied: ['logLevel (info → debug)', 'handlers[example.com/a].versions'],
      needsRestart: ['shutdownTimeoutMs'],
    });
    const levels: string[] = [];
    const versions: Array<[string, readonly string[]]> = [];
    const logger = createRecordingLogger();
    const effective = reloadConfig({
      load: () => next,
      running,
      target: {
        setLogLevel: (l) => levels.push(l),
        setHandlerVersions: (t, v) => versions.push([t, v]),
        setObjectLimits: () => assert.fail('no object limit changed'),
      },
      logger,
    });
    assert.deepEqual(levels, ['debug']);
    assert.deepEqual(
      versions.find(([type]) => type === 'example.com/a'),
      ['example.com/a', ['v1', 'v2']],
    );
    assert.equal(effective.logLevel, 'debug');
    // Not applied: still the running value.
    assert.equal(effective.shutdownTimeoutMs, running.shutdownTimeoutMs);
  });

  it('applies the Cache TTL and the pod caps; the object source, strategy and body limit need a restart', () => {
    const running = base();
    const next = resolveDaemonConfig(
      {
        handlers: [{ type: 'example.com/a', versions: ['v1'] }],
        objects: { ttl: 5000, maxPods: 3, maxReferencesPerPod: 9, maxPodBytes: 4096, strategy: 'Get' },
      },
      { dataDir: '/d' },
      { env: {} },
    );
    assert.deepEqual(planReload(running, next), {
      applied: [
        'objects.ttlMs (60000 → 5000)',
        'objects.maxPods (110 → 3)',
        'objects.maxReferencesPerPod (256 → 9)',
      ],
      needsRestart: ['objects.maxPodBytes', 'objects.strategy'],
    });
    const limits: unknown[] = [];
    const effective = reloadConfig({
      load: () => next,
      running,
      target: { setLogLevel: () => {}, setHandlerVersions: () => {}, setObjectLimits: (l) => limits.push(l) },
      logger: createRecordingLogger(),
    });
    assert.deepEqual(limits, [{ ttlMs: 5000, maxPods: 3, maxReferencesPerPod: 9 }]);
    assert.equal(effective.objects.maxPods, 3);
    // What needs a restart keeps its running value.
    assert.equal(effective.objects.strategy, running.objects.strategy);
    assert.equal(effective.objects.maxPodBytes, running.objects.maxPodBytes);
  });

  it('a handler type added or removed needs a restart and changes no versions', () => {
    const running = base();
    const next = resolveDaemonConfig(
      { handlers: [{ type: 'example.com/b', versions: ['v1'] }] },
      { dataDir: '/d' },
      { env: {} },
    );
    assert.deepEqual(planReload(running, next), {
      applied: [],
      needsRestart: ['handlers (types added or removed)'],
    });
  });

  it('an invalid file keeps the running config and says why', () => {
    const running = base();
    const logger = createRecordingLogger();
    let touched = false;
    const effective = reloadConfig({
      load: () => {
        throw new BerthError(
          'BERTH_CONFIG_INVALID',
          'config /etc/berth/config.yaml: logLevel: expected one of ...',
        );
      },
      running,
      target: {
        setLogLevel: () => (touched = true),
        setHandlerVersions: () => (touched = true),
        setObjectLimits: () => (touched = true),
      },
      logger,
    });
    assert.equal(effective, running);
    assert.equal(touched, false);
    assert.ok(
      logger.records.some(
        (r) =>
          r.level === 'warn' &&
          r.message ===
            'config reload refused, keeping the running config: config /etc/berth/config.yaml: logLevel: expected one of ...',
      ),
      JSON.stringify(logger.records),
    );
  });
});
