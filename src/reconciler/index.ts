/**
 * @internal The plugin manager's part: the reconciler. Exported for berth's own
 * folders, tests and benchmarks; use `berth/plugin-manager` or
 * `berth/plugin-node`, whose surface is stable.
 */
export { createReconciler, type Reconciler } from './reconciler.js';
export { DEFAULT_RESYNC_PERIOD_MS } from './reconciler-options.js';
