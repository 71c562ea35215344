import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { OperationEvent } from '../executor/index.js';
import type { ActualStateView, DesiredStateView } from './types.js';

/**
 * The kubelet's one plugin-manager metric, plus berth's own:
 * - plugin_manager_total_plugins{socket_path,state}: computed at scrape time,
 *   one series per socket in each cache (value 1), none for an empty cache;
 * - berth_registration_duration_seconds{result}: one observation per register attempt;
 * - berth_plugin_operations_total{operation,result};
 * - berth_plugin_operation_failures_total{reason}: reason is the BERTH_ error code.
 */
export const TOTAL_PLUGINS_METRIC = 'plugin_manager_total_plugins';
export const ACTUAL_STATE_LABEL = 'actual_state_of_world';
export const DESIRED_STATE_LABEL = 'desired_state_of_world';

export interface PluginManagerMetricsOptions {
  registry: Registry;
  desiredState: Pick<DesiredStateView, 'getPluginsToRegister'>;
  actualState: Pick<ActualStateView, 'getRegisteredPlugins'>;
}

export interface PluginManagerMetrics {
  readonly registry: Registry;
  recordOperation(event: OperationEvent): void;
  /** A registered plugin failed its liveness probes and is being deregistered. */
  recordLivenessFailure(): void;
  /** Takes the metrics off the registry (a stopped manager must not keep answering scrapes). */
  unregister(): void;
}

const NAMES = [
  TOTAL_PLUGINS_METRIC,
  'berth_registration_duration_seconds',
  'berth_plugin_operations_total',
  'berth_plugin_operation_failures_total',
] as const;

export function createPluginManagerMetrics(options: PluginManagerMetricsOptions): PluginManagerMetrics {
  const { registry, desiredState, actualState } = options;
  const registers = [registry];

  new Gauge({
    name: TOTAL_PLUGINS_METRIC,
    help: 'Number of plugins in Plugin Manager',
    labelNames: ['socket_path', 'state'] as const,
    registers,
    collect() {
      this.reset();
      for (const plugin of actualState.getRegisteredPlugins()) {
        this.set({ socket_path: plugin.socketPath, state: ACTUAL_STATE_LABEL }, 1);
      }
      for (const plugin of desiredState.getPluginsToRegister()) {
        this.set({ socket_path: plugin.socketPath, state: DESIRED_STATE_LABEL }, 1);
      }
    },
  });
  const duration = new Histogram({
    name: 'berth_registration_duration_seconds',
    help: 'Duration of plugin registration attempts (dial to final Notify), by result.',
    labelNames: ['result'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const operations = new Counter({
    name: 'berth_plugin_operations_total',
    help: 'Plugin register and unregister operations, by result.',
    labelNames: ['operation', 'result'] as const,
    registers,
  });
  const failures = new Counter({
    name: 'berth_plugin_operation_failures_total',
    help: 'Failed plugin operations and liveness failures, by BERTH_ error code.',
    labelNames: ['reason'] as const,
    registers,
  });

  return {
    registry,
    recordOperation(event) {
      switch (event.type) {
        case 'register-succeeded':
          operations.inc({ operation: 'register', result: 'success' });
          duration.observe({ result: 'success' }, event.durationMs / 1000);
          return;
        case 'register-failed':
          operations.inc({ operation: 'register', result: 'failure' });
          failures.inc({ reason: event.error.code });
          duration.observe({ result: 'failure' }, event.durationMs / 1000);
          return;
        case 'unregister-succeeded':
          operations.inc({ operation: 'unregister', result: 'success' });
          return;
        case 'unregister-failed':
          operations.inc({ operation: 'unregister', result: 'failure' });
          failures.inc({ reason: event.error.code });
          return;
      }
    },
    recordLivenessFailure() {
      failures.inc({ reason: 'BERTH_LIVENESS_FAILED' });
    },
    unregister() {
      for (const name of NAMES) registry.removeSingleMetric(name);
    },
  };
}
