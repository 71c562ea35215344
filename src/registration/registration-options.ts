/** Defaults and bounds of the registration client and the example plugin (light: constants only). */
import type { BackoffPolicy } from '../common/index.js';

/** The example service versions berth's example plugin serves by default (`berth example-plugin` too). */
export const EXAMPLE_VERSIONS = ['v1beta1', 'v1beta2'] as const;

/**
 * Retries of a dial whose connection closed before HTTP/2 started (a server
 * between bind() and listen(), or a full backlog): 10 ms doubling to 100 ms,
 * within the dial's deadline.
 */
export const DIAL_RETRY_BACKOFF: Readonly<BackoffPolicy> = Object.freeze({
  initialMs: 10,
  maxMs: 100,
  factor: 2,
});
