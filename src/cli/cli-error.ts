import { BerthError, isBerthError } from '../common/index.js';

/** Exit codes: 0 success, 1 runtime failure, 2 usage error. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A mistake in how berth was called (flags, arguments, files): exit code 2. */
export function usageError(message: string): BerthError {
  return new BerthError('BERTH_USAGE', message);
}

/** The exit code for an error: usage and config problems (and a config this install cannot serve) are the caller's (2), the rest runtime failures (1). */
export function exitCodeFor(err: unknown): number {
  if (
    isBerthError(err, 'BERTH_USAGE') ||
    isBerthError(err, 'BERTH_CONFIG_INVALID') ||
    isBerthError(err, 'BERTH_DEPENDENCY_MISSING')
  ) {
    return EXIT_USAGE;
  }
  return EXIT_FAILURE;
}

/** The one line printed for an error: `berth: <what is wrong and what to do>`. */
export function errorLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return `berth: ${message.split('\n')[0]}`;
}
