import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { createActualStateOfWorld, createDesiredStateOfWorld } from '../cache/index.js';
import { BerthError } from '../common/index.js';
import { createPluginManagerMetrics } from './metrics.js';

function setup() {
  const registry = new Registry();
  const desiredState = createDesiredStateOfWorld();
  const actualState = createActualStateOfWorld();
  const metrics = createPluginManagerMetrics({ registry, desiredState, actualState });
  const seriesOf = async (name: string) =>
    (await registry.metrics())
      .split('\n')
      .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
  return { registry, desiredState, actualState, metrics, seriesOf };
}

describe('plugin manager metrics (upstream metrics_test)', () => {
  it('one series per state for a socket in both caches, computed at scrape time', async () => {
    const { registry, desiredState, actualState, seriesOf } = setup();
    desiredState.addOrUpdatePlugin('fake/path/plugin.sock');
    actualState.addPlugin({
      socketPath: 'fake/path/plugin.sock',
      timestamp: 1,
      uuid: 'u',
      foundInDeprecatedDir: false,
    });
    const text = await registry.metrics();
    assert.match(text, /^# HELP plugin_manager_total_plugins Number of plugins in Plugin Manager$/m);
    assert.match(text, /^# TYPE plugin_manager_total_plugins gauge$/m);
    assert.deepEqual((await seriesOf('plugin_manager_total_plugins')).sort(), [
      'plugin_manager_total_plugins{socket_path="fake/path/plugin.sock",state="actual_state_of_world"} 1',
      'plugin_manager_total_plugins{socket_path="fake/path/plugin.sock",state="desired_state_of_world"} 1',
    ]);

    // Scrape time, not registration time: a removal is gone from the next scrape.
    actualState.removePlugin('fake/path/plugin.sock');
    assert.deepEqual(await seriesOf('plugin_manager_total_plugins'), [
      'plugin_manager_total_plugins{socket_path="fake/path/plugin.sock",state="desired_state_of_world"} 1',
    ]);
  });

  it('empty caches emit no series', async () => {
    const { seriesOf } = setup();
    assert.deepEqual(await seriesOf('plugin_manager_total_plugins'), []);
  });

  it('counts operations by result, failures by error code, and times registrations', async () => {
    const { metrics, seriesOf } = setup();
    const plugin = { socketPath: '/p.sock', timestamp: 1, uuid: 'u', foundInDeprecatedDir: false };
    metrics.recordOperation({
      type: 'register-succeeded',
      at: 1,
      socketPath: '/p.sock',
      plugin,
      durationMs: 20,
      attempts: 1,
    });
    metrics.recordOperation({
      type: 'register-failed',
      at: 1,
      socketPath: '/p.sock',
      generation: 'u',
      error: new BerthError('BERTH_DIAL_FAILED', 'refused'),
      retryAt: 501,
      attempts: 1,
      durationMs: 2,
    });
    metrics.recordOperation({
      type: 'unregister-succeeded',
      at: 1,
      socketPath: '/p.sock',
      plugin,
      durationMs: 0,
    });
    metrics.recordLivenessFailure();
    assert.deepEqual((await seriesOf('berth_plugin_operations_total')).sort(), [
      'berth_plugin_operations_total{operation="register",result="failure"} 1',
      'berth_plugin_operations_total{operation="register",result="success"} 1',
      'berth_plugin_operations_total{operation="unregister",result="success"} 1',
    ]);
    assert.deepEqual((await seriesOf('berth_plugin_operation_failures_total')).sort(), [
      'berth_plugin_operation_failures_total{reason="BERTH_DIAL_FAILED"} 1',
      'berth_plugin_operation_failures_total{reason="BERTH_LIVENESS_FAILED"} 1',
    ]);
    assert.ok(
      (await seriesOf('berth_registration_duration_seconds_count')).includes(
        'berth_registration_duration_seconds_count{result="success"} 1',
      ),
    );
    assert.ok(
      (await seriesOf('berth_registration_duration_seconds_bucket')).includes(
        'berth_registration_duration_seconds_bucket{le="0.025",result="success"} 1',
      ),
    );
  });

  it('unregister() takes the metrics off the registry', async () => {
    const { registry, metrics } = setup();
    metrics.unregister();
    assert.equal((await registry.metrics()).trim(), '');
  });
});
