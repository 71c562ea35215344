import type { PluginInfo } from '../cache/types.js';
import type { BerthError, BerthMode } from '../common/index.js';
import type { OperationStatus } from '../executor/index.js';
import { observedStatus } from './observed-status.js';
import type { SocketStatus } from './types.js';

/** A plugin liveness gave up on; remembered while its socket file lingers. */
export interface DeadSocket {
  uuid: string;
  foundInDeprecatedDir: boolean;
  plugin?: { type: string; name: string };
  error: BerthError;
  failures: number;
  at: number;
}

export interface SocketStatusInputs {
  now: number;
  desired: PluginInfo[];
  registered: PluginInfo[];
  operation: (socketPath: string) => OperationStatus | undefined;
  dead: ReadonlyMap<string, DeadSocket>;
  registeredAt: ReadonlyMap<string, { uuid: string; at: number; attempts: number }>;
  /** `observe`: states are reported as an observer's (observed-status.ts). Default registrar. */
  mode?: BerthMode;
  /** When liveness next probes a dead socket for recovery. */
  nextRecoveryProbe?: (socketPath: string) => number | undefined;
}

/**
 * Every socket berth knows of and what is happening to it; nothing is
 * skipped. A failure recorded for an older generation of a socket (a stale
 * file since replaced) does not count against the new one.
 */
export function socketStatuses(inputs: SocketStatusInputs): SocketStatus[] {
  const desired = new Map(inputs.desired.map((p) => [p.socketPath, p]));
  const registered = new Map(inputs.registered.map((p) => [p.socketPath, p]));
  const paths = new Set([...desired.keys(), ...registered.keys(), ...inputs.dead.keys()]);
  const out: SocketStatus[] = [];
  for (const socketPath of [...paths].sort()) {
    const wanted = desired.get(socketPath);
    const status = statusOf(socketPath, wanted, registered.get(socketPath), inputs);
    out.push(
      inputs.mode === 'observe' ? observedStatus(status, decidingError(socketPath, wanted, inputs)) : status,
    );
  }
  return out;
}

/** The error behind a socket's failed state: liveness's verdict, else its current generation's last attempt. */
function decidingError(
  socketPath: string,
  wanted: PluginInfo | undefined,
  inputs: SocketStatusInputs,
): BerthError | undefined {
  const dead = inputs.dead.get(socketPath);
  if (wanted === undefined && dead !== undefined) return dead.error;
  const op = inputs.operation(socketPath);
  if (op === undefined || (wanted !== undefined && op.generation !== wanted.uuid)) return undefined;
  return op.lastError;
}

function statusOf(
  socketPath: string,
  wanted: PluginInfo | undefined,
  actual: PluginInfo | undefined,
  inputs: SocketStatusInputs,
): SocketStatus {
  const op = inputs.operation(socketPath);
  const status: SocketStatus = { socketPath, state: 'pending', attempts: 0 };
  const generation = wanted ?? actual;
  if (generation !== undefined) status.foundInDeprecatedDir = generation.foundInDeprecatedDir;

  if (actual !== undefined) {
    if (actual.type !== undefined && actual.name !== undefined) {
      status.plugin = { type: actual.type, name: actual.name };
    }
    if (actual.endpoint !== undefined) status.endpoint = actual.endpoint;
    if (actual.supportedVersions !== undefined) status.versions = [...actual.supportedVersions];
    const since = inputs.registeredAt.get(socketPath);
    if (since !== undefined && since.uuid === actual.uuid) {
      status.registeredAt = since.at;
      status.attempts = since.attempts;
    }
    // Mid-operation (being registered or deregistered) it is pending, not registered yet / any more.
    status.state = op?.pending ? 'pending' : 'registered';
    // A registration in flight (the handler or the final Notify still running) shows its attempts
    // and why the previous one failed, as a pending socket not yet in the actual state does.
    if (op?.pending && since?.uuid !== actual.uuid && op.generation === actual.uuid) {
      status.attempts = op.attempts;
      if (op.lastError !== undefined) status.lastError = describe(op.lastError);
    }
    return status;
  }

  const dead = inputs.dead.get(socketPath);
  if (wanted === undefined && dead !== undefined) {
    status.state = 'failed';
    if (dead.plugin !== undefined) status.plugin = dead.plugin;
    status.lastError = describe(dead.error);
    status.attempts = dead.failures;
    const probe = inputs.nextRecoveryProbe?.(socketPath);
    if (probe !== undefined) status.retryAt = probe;
    return status;
  }

  // Only the current generation's operation record counts.
  if (op === undefined || (wanted !== undefined && op.generation !== wanted.uuid)) return status;
  status.attempts = op.attempts;
  // A retry in flight still shows why the previous attempt failed.
  if (op.lastError !== undefined) {
    status.lastError = describe(op.lastError);
    const { type, name } = op.lastError.details;
    if (typeof type === 'string' && typeof name === 'string') status.plugin = { type, name };
  }
  if (op.pending) return status;
  if (op.retryAt !== undefined) {
    status.retryAt = op.retryAt;
    status.state = inputs.now <= op.retryAt ? 'backoff' : 'failed';
  } else if (op.lastError !== undefined) {
    status.state = 'failed';
  }
  return status;
}

function describe(error: BerthError): { code: string; message: string; cause?: string } {
  const out: { code: string; message: string; cause?: string } = { code: error.code, message: error.message };
  if (error.cause instanceof Error && error.cause.message !== error.message) out.cause = error.cause.message;
  return out;
}
