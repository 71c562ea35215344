import type { BerthError } from '../common/index.js';
import type { SocketStatus } from './types.js';

/**
 * Refusals of a plugin that answered GetInfo: the kubelet would have sent
 * these texts in NotifyRegistrationStatus(false). An observer reports them as
 * the dry run's verdict; the socket itself answered, so it is `observed`.
 */
const REFUSALS = new Set(['BERTH_NO_HANDLER', 'BERTH_VALIDATION_FAILED', 'BERTH_REGISTER_FAILED']);

/** Nothing listens: the file is left over (a refused connect, or the file went meanwhile). */
const NO_LISTENER = /ECONNREFUSED|ENOENT/;

/**
 * Observe mode's view of one socket, from the registrar-mode status and the
 * error that decided it (the last attempt's, or liveness's):
 * - answered GetInfo and the dry run accepted it: `observed`, verdict accepted;
 * - answered GetInfo and the dry run refused it: `observed`, verdict refused
 *   with the text the kubelet would send (duplicate name, unsupported version,
 *   no handler, a failed read-only call);
 * - no listener: `stale`; any other failure (timeout, protocol error): `unreachable`.
 * `pending` (not yet probed, or a probe running) stays as it is.
 */
export function observedStatus(status: SocketStatus, error: BerthError | undefined): SocketStatus {
  if (status.state === 'registered') return { ...status, state: 'observed', verdict: { accepted: true } };
  if (status.state === 'pending' || error === undefined) return status;
  if (REFUSALS.has(error.code)) {
    const out: SocketStatus = { ...status, state: 'observed' };
    const { endpoint, versions, refusal } = error.details;
    if (typeof endpoint === 'string') out.endpoint = endpoint;
    if (Array.isArray(versions)) out.versions = versions.map(String);
    out.verdict = { accepted: false, error: typeof refusal === 'string' ? refusal : error.message };
    return out;
  }
  const cause = error.cause instanceof Error ? error.cause.message : '';
  const stale = error.code === 'BERTH_DIAL_FAILED' && NO_LISTENER.test(`${error.message} ${cause}`);
  return { ...status, state: stale || NO_LISTENER.test(error.message) ? 'stale' : 'unreachable' };
}
