/**
 * A daemon default and the default of the component it configures must be the
 * same value: `berth run` with no config must behave like the library with no
 * options. defaults.ts imports the components' `*-options.ts` values rather
 * than restating them; this test catches a restated copy that drifts, and a
 * resolved config that does not hand the component defaults on.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_BERTH_MODE } from '../../common/index.js';
import { DEFAULT_EXECUTOR_BACKOFF, DEFAULT_EXECUTOR_TIMEOUTS } from '../../executor/index.js';
import { builtinHandlers } from '../../handlers/builtin-handlers.js';
import {
  CHANGE_DETECTION_STRATEGIES,
  DEFAULT_CHANGE_DETECTION_STRATEGY,
  DEFAULT_MAX_POD_BYTES,
  DEFAULT_MAX_PODS,
  DEFAULT_MAX_REFERENCES_PER_POD,
  DEFAULT_OBJECT_TTL_MS,
} from '../../objects/index.js';
import { DEFAULT_LIVENESS, DEFAULT_RESYNC_PERIOD_MS } from '../../plugin-manager/index.js';
import { DEFAULT_RESCAN_INTERVAL_MS } from '../../watcher/index.js';
import { DEFAULT_EVENT_RING_SIZE } from '../event-bus-options.js';
import { parseConfigDocument, resolveDaemonConfig } from './config.js';
import { OBJECT_STRATEGIES } from './config-schema.js';
import { BUILTIN_HANDLER_TYPES, DEFAULTS } from './defaults.js';

/** [daemon default, component default, what it is] */
const PAIRS: Array<[unknown, unknown, string]> = [
  [DEFAULTS.resyncPeriodMs, DEFAULT_RESYNC_PERIOD_MS, 'plugin manager resync period'],
  [DEFAULTS.rescanIntervalMs, DEFAULT_RESCAN_INTERVAL_MS, 'plugin watcher rescan interval'],
  [DEFAULTS.dialTimeoutMs, DEFAULT_EXECUTOR_TIMEOUTS.dialMs, 'executor dial timeout'],
  [DEFAULTS.getInfoTimeoutMs, DEFAULT_EXECUTOR_TIMEOUTS.getInfoMs, 'executor GetInfo timeout'],
  [DEFAULTS.notifyTimeoutMs, DEFAULT_EXECUTOR_TIMEOUTS.notifyMs, 'executor Notify timeout'],
  [DEFAULTS.backoff, DEFAULT_EXECUTOR_BACKOFF, 'registration retry backoff'],
  [DEFAULTS.livenessPeriodMs, DEFAULT_LIVENESS.periodMs, 'liveness period'],
  [DEFAULTS.livenessTimeoutMs, DEFAULT_LIVENESS.timeoutMs, 'liveness timeout'],
  [DEFAULTS.livenessFailureThreshold, DEFAULT_LIVENESS.failureThreshold, 'liveness failure threshold'],
  [DEFAULTS.livenessPingsPerPeriod, DEFAULT_LIVENESS.pingsPerPeriod, 'liveness pings per period'],
  [DEFAULTS.objectStrategy, DEFAULT_CHANGE_DETECTION_STRATEGY, 'object change-detection strategy'],
  [DEFAULTS.objectTtlMs, DEFAULT_OBJECT_TTL_MS, 'object TTL (Cache strategy)'],
  [DEFAULTS.mode, DEFAULT_BERTH_MODE, 'plugin manager mode'],
  [DEFAULTS.apiEventRingSize, DEFAULT_EVENT_RING_SIZE, 'event ring (Last-Event-ID replay)'],
  [DEFAULTS.maxPods, DEFAULT_MAX_PODS, 'pods registered at once'],
  [DEFAULTS.maxReferencesPerPod, DEFAULT_MAX_REFERENCES_PER_POD, 'references per pod'],
  [DEFAULTS.maxPodBytes, DEFAULT_MAX_POD_BYTES, 'pod document size'],
];

describe('daemon defaults', () => {
  for (const [daemon, component, what] of PAIRS) {
    it(`${what}: the daemon's default is the component's`, () => {
      assert.deepEqual(daemon, component);
    });
  }

  it('the config accepts exactly the object strategies the object manager knows', () => {
    assert.deepEqual([...OBJECT_STRATEGIES].sort(), [...CHANGE_DETECTION_STRATEGIES].sort());
  });

  it('a config with nothing set hands every component its own default', () => {
    const config = resolveDaemonConfig({}, {}, { env: {}, home: '/home/u', cwd: '/w' });
    assert.equal(config.resyncPeriodMs, DEFAULT_RESYNC_PERIOD_MS);
    assert.equal(config.rescanIntervalMs, DEFAULT_RESCAN_INTERVAL_MS);
    assert.deepEqual(config.timeouts, { ...DEFAULT_EXECUTOR_TIMEOUTS });
    assert.deepEqual(config.liveness, { ...DEFAULT_LIVENESS });
    assert.equal(config.objects.strategy, DEFAULT_CHANGE_DETECTION_STRATEGY);
    assert.equal(config.objects.ttlMs, DEFAULT_OBJECT_TTL_MS);
  });

  it('every built-in handler type is known to the config from the one table', () => {
    // The plugin node builds handlers and dispensers from the same table (plugin-node/node-handlers.ts).
    assert.deepEqual([...BUILTIN_HANDLER_TYPES], Object.keys(builtinHandlers));
    for (const type of Object.keys(builtinHandlers)) {
      assert.throws(
        () => parseConfigDocument({ handlers: [{ type, versions: ['1.0.0'] }] }, 'berth.yaml'),
        new RegExp(`${type} has a built-in handler`),
      );
    }
  });
});
