import type { ActualStateOfWorld, PluginInfo } from '../cache/types.js';
import {
  BerthError,
  type BerthErrorCode,
  type BerthMode,
  errorMessage,
  type Logger,
  type TurnBudget,
} from '../common/index.js';
import type { PluginCallContext } from '../handlers/types.js';
import {
  enforcePluginInfoBounds,
  refusedBeforeDial,
  refuseUndecodableInfo,
} from '../registration/registrar.js';
import type { DialRegistration, RegistrationConnection } from '../registration/types.js';
import type { ExecutorTimeouts, YoungSocketRetry } from './executor-options.js';
import type { RegistrationLanes } from './lanes.js';
import type { SlotLease } from './slots.js';
import type { HandlerLookup, HoldConnection, PluginGeneration } from './types.js';
import { deregisterQuietly } from './unregister-operation.js';
import { dialYoungSocket, isYoungSocket } from './young-socket.js';

export interface RegisterRequest {
  socketPath: string;
  generation: PluginGeneration;
  getHandler: HandlerLookup;
  asw: ActualStateOfWorld;
  /** The socket still refused a probe but is young (probeBeforeSlot): probe again before dialling. */
  refusedLast?: boolean;
}

export interface RegisterDeps {
  dial: DialRegistration;
  timeouts: ExecutorTimeouts;
  logger: Logger;
  /** Bounds the attempts in flight and how long each may hold a slot (lanes.ts); none without it. */
  lanes?: RegistrationLanes;
  youngSocketRetry?: YoungSocketRetry | false;
  /** Sockets in young-socket retries now, shared across one executor's attempts. */
  retrying?: { count: number };
  /** `observe`: the attempt is a dry run that tells the plugin nothing (see `silenced`). Default registrar. */
  mode?: BerthMode;
  /** Takes the connection of a plugin that registered (liveness keeps it); otherwise it is closed. */
  holdConnection?: HoldConnection | undefined;
  /** Shares each event-loop turn among the attempts: they resume after I/O only while the turn has time. */
  turn?: TurnBudget;
}

/**
 * The gate before a retry of a socket whose last attempt was refused (most
 * likely a stale file) waits for its handshake slot: one raw connect
 * (refusedBeforeDial). A file that still refuses and is not young fails the
 * attempt here, holding no slot. Its retries come in waves, 1,000 stale
 * files together after each backoff, and a wave that probed under the slots
 * drained through them in slots-many at a time, one event-loop turn or more
 * each, while good plugins queued behind it for the same slots.
 *
 * Resolves true when the file still refuses but is young (a server between
 * bind and listen): the attempt probes again under its slot and its young
 * retries run as for any dial (dialYoungSocket). Resolves false when the
 * file answered the connect: dial it. Rejects with the attempt's error.
 */
export async function probeBeforeSlot(
  deps: RegisterDeps,
  request: Pick<RegisterRequest, 'socketPath' | 'generation'>,
): Promise<boolean> {
  const { socketPath, generation } = request;
  await deps.turn?.pass();
  const refused = await refusedBeforeDial(socketPath);
  if (refused === undefined) return false;
  if (isYoungSocket(socketPath, deps.youngSocketRetry)) return true;
  deps.lanes?.record(socketPath, generation.uuid, false);
  throw dialFailed(socketPath, refused);
}

/** The attempt's error for a dial that failed, in the kubelet's words (operation_generator.go). */
function dialFailed(socketPath: string, err: unknown): BerthError {
  return new BerthError(
    'BERTH_DIAL_FAILED',
    `RegisterPlugin error -- dial failed at socket ${socketPath}, err: ${errorMessage(err)}`,
    { cause: err, details: { socketPath } },
  );
}

/**
 * A slot the attempt's caller already acquired, of the lane
 * `handshakeLane(offender)` gives (lanes.ts). The attempt leases it for its
 * handshake instead of waiting for one.
 */
export interface AdmittedSlot {
  offender: boolean;
}

/**
 * One registration attempt, in the kubelet's order and with its texts
 * (operation_generator.go): dial -> GetInfo -> handler by type -> validate ->
 * actual state -> register -> Notify(true). NotifyRegistrationStatus is sent
 * exactly once per attempt that got past GetInfo.
 *
 * berth fix of kubernetes#133725: when the handler's register or the final
 * Notify fails, the plugin is taken out of the actual state again (and, after
 * a successful register, deregistered), so the failed attempt is retried with
 * backoff instead of leaving the plugin half-registered.
 *
 * Slots (lanes.ts): the handshake, up to validation, holds a slot of the
 * main lane; the handler's register and the final Notify hold a slot of the
 * plugin type's lane; an offender (its last attempt overran a budget) holds
 * one slow-lane slot for the whole attempt. Each hold has a budget; past it the
 * attempt carries on without the slot.
 *
 * Resolves with the actual-state entry; rejects with a BerthError whose
 * details carry `type` and `name` once GetInfo has answered.
 */
export async function registerOperation(
  deps: RegisterDeps,
  request: RegisterRequest,
  signal: AbortSignal,
  admitted?: AdmittedSlot,
): Promise<PluginInfo> {
  const { socketPath, generation, getHandler, asw } = request;
  const { timeouts, logger, lanes } = deps;
  let overran = false;
  const onOverrun = () => {
    overran = true;
  };
  const offender = admitted?.offender ?? lanes?.isOffender(socketPath, generation.uuid) ?? false;
  const dialDeps = {
    ...deps,
    probeFirst: request.refusedLast === true,
    ...(lanes === undefined
      ? {}
      : {
          slots: lanes.handshakeLane(offender),
          hold: lanes.hold(offender ? lanes.budgets.slowMs : lanes.budgets.handshakeMs, onOverrun),
          acquired: admitted !== undefined,
        }),
  };

  let conn: RegistrationConnection;
  let lease: SlotLease;
  try {
    // Returns holding a slot lease (when there are lanes), taken before the connect.
    const dialled = await dialYoungSocket(dialDeps, socketPath, signal);
    conn = deps.mode === 'observe' ? silenced(dialled.conn) : dialled.conn;
    lease = dialled.lease;
  } catch (err) {
    lanes?.record(socketPath, generation.uuid, overran);
    throw dialFailed(socketPath, err);
  }

  try {
    let info: Awaited<ReturnType<RegistrationConnection['getInfo']>>;
    try {
      await deps.turn?.pass();
      info = await conn.getInfo({ timeoutMs: timeouts.getInfoMs, signal });
    } catch (err) {
      await refuseUndecodableInfo(conn, err, socketPath, { timeoutMs: timeouts.notifyMs, signal });
      throw new BerthError(
        'BERTH_GET_INFO_FAILED',
        `RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket ${socketPath}, err: ${errorMessage(err)}`,
        { cause: err, details: { socketPath } },
      );
    }
    await deps.turn?.pass();
    const plugin = { type: info.type, name: info.name };
    // What GetInfo said, carried by every refusal so a socket's status can show it.
    const answered = {
      ...plugin,
      socketPath,
      endpoint: info.endpoint === '' ? socketPath : info.endpoint,
      versions: [...info.supportedVersions],
    };

    /**
     * Tells the plugin it was refused and builds the attempt's error: the
     * refusal text, or the upstream "failed to send error" text if the
     * Notify itself failed (the code stays the refusal's, so callers can react to it).
     */
    const refuse = async (code: BerthErrorCode, notifyText: string, errorText: string, cause?: unknown) => {
      try {
        await conn.notifyRegistrationStatus(
          { pluginRegistered: false, error: notifyText },
          { timeoutMs: timeouts.notifyMs, signal },
        );
      } catch (notifyErr) {
        return new BerthError(
          code,
          `RegisterPlugin error -- failed to send error at socket ${socketPath}, err: ${notifyText}: ${errorMessage(notifyErr)}`,
          {
            cause: cause ?? notifyErr,
            details: { ...answered, refusal: notifyText, notifyError: errorMessage(notifyErr) },
          },
        );
      }
      // `refusal` is what the plugin is told: an observer reports it as the kubelet's verdict.
      return new BerthError(code, errorText, { cause, details: { ...answered, refusal: notifyText } });
    };

    await enforcePluginInfoBounds(conn, info, socketPath, { timeoutMs: timeouts.notifyMs, signal });
    const handler = getHandler(info.type);
    if (handler === undefined) {
      const text = `RegisterPlugin error -- no handler registered for plugin type: ${info.type} at socket ${socketPath}`;
      throw await refuse('BERTH_NO_HANDLER', text, text);
    }

    // An empty endpoint means the plugin serves on its registration socket.
    const endpoint = info.endpoint === '' ? socketPath : info.endpoint;
    const versions = info.supportedVersions;
    const context: PluginCallContext = {
      type: info.type,
      socketPath,
      foundInDeprecatedDir: generation.foundInDeprecatedDir,
      ...(deps.mode === 'observe' ? { mode: deps.mode } : {}),
    };

    try {
      await handler.validatePlugin(info.name, endpoint, versions, context);
    } catch (err) {
      throw await refuse(
        'BERTH_VALIDATION_FAILED',
        `RegisterPlugin error -- plugin validation failed with err: ${errorMessage(err)}`,
        'RegisterPlugin error -- pluginHandler.ValidatePluginFunc failed',
        err,
      );
    }

    // The handshake is done: the handler's calls wait in (and hold) a slot of the plugin type's
    // own lane. An offender keeps its one slow-lane slot. The finally below releases the lease.
    if (lanes !== undefined && !offender) {
      lease.release();
      lease = await lanes
        .handlerLane(info.type)
        .lease(signal, lanes.hold(lanes.budgets.handlerMs, onOverrun));
    }

    // Added before the handler's register (as upstream), so a socket deleted
    // meanwhile becomes a deregistration once this operation has finished.
    const entry: PluginInfo = {
      socketPath,
      timestamp: generation.timestamp,
      uuid: generation.uuid,
      foundInDeprecatedDir: generation.foundInDeprecatedDir,
      handler,
      type: info.type,
      name: info.name,
      endpoint,
      supportedVersions: [...versions],
    };
    try {
      asw.addPlugin(entry);
    } catch (err) {
      logger.error(
        { socketPath, err },
        `RegisterPlugin error -- failed to add plugin at socket ${socketPath}`,
      );
    }

    try {
      await handler.registerPlugin(info.name, endpoint, versions, context);
    } catch (err) {
      removeIfOurs(asw, entry);
      throw await refuse(
        'BERTH_REGISTER_FAILED',
        `RegisterPlugin error -- plugin registration failed with err: ${errorMessage(err)}`,
        `RegisterPlugin error -- plugin registration failed with err: ${errorMessage(err)}`,
        err,
      );
    }

    await deps.turn?.pass();
    try {
      await conn.notifyRegistrationStatus(
        { pluginRegistered: true, error: '' },
        { timeoutMs: timeouts.notifyMs, signal },
      );
    } catch (err) {
      if (signal.aborted) {
        // berth itself is stopping, not the plugin failing: undoing the
        // handler's registration now would delete a live plugin from
        // persisted state. The next start re-verifies it with a handshake.
        throw new BerthError('BERTH_SHUT_DOWN', `RegisterPlugin at socket ${socketPath} cut short by stop`, {
          cause: err,
          details: { ...plugin, socketPath },
        });
      }
      // The handler accepted the plugin but the plugin never heard so: undo
      // both sides, so the retry starts from a clean slate.
      removeIfOurs(asw, entry);
      await deregisterQuietly(handler, entry, context, logger);
      throw new BerthError(
        'BERTH_NOTIFY_FAILED',
        `RegisterPlugin error -- failed to send registration status at socket ${socketPath}, err: ${errorMessage(err)}`,
        { cause: err, details: { ...plugin, socketPath } },
      );
    }
    await deps.turn?.pass();
    const held = deps.holdConnection === undefined ? undefined : conn.hold?.();
    if (held !== undefined) deps.holdConnection?.(socketPath, generation.uuid, held);
    return entry;
  } finally {
    conn.close();
    lease.release();
    lanes?.record(socketPath, generation.uuid, overran);
  }
}

/**
 * Observe mode: the same attempt, with NotifyRegistrationStatus made a no-op.
 * Every Notify of the attempt (bounds refusals, handler refusals, the final
 * success) goes through the connection, so this one wrapper is what keeps an
 * observer from telling a plugin anything: GetInfo is its only registration call.
 */
function silenced(conn: RegistrationConnection): RegistrationConnection {
  return {
    socketPath: conn.socketPath,
    getInfo: (options) => conn.getInfo(options),
    notifyRegistrationStatus: async () => {},
    hold: () => conn.hold?.(),
    close: () => conn.close(),
  };
}

function removeIfOurs(asw: ActualStateOfWorld, entry: PluginInfo): void {
  if (asw.pluginExistsWithCorrectUUID(entry)) asw.removePlugin(entry.socketPath);
}
