export {
  createReconciler,
  type Reconciler,
  type ReconcilerHandlers,
  type ReconcilerOptions,
  type Refusal,
} from './reconciler.js';
