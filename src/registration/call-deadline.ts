import { BerthError } from '../common/index.js';

/** A call's deadline must be a positive number of milliseconds (every unary call and dial checks it). */
export function assertTimeout(timeoutMs: number, what: string): void {
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `${what}: timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`,
    );
  }
}
