export {
  createReconciler,
  type Reconciler,
  type ReconcilerHandlers,
  type ReconcilerOptions,
  type Refusal,
} from './reconciler.js';
export { DEFAULT_RECONCILER_OPTIONS, DEFAULT_RESYNC_PERIOD_MS } from './reconciler-options.js';
