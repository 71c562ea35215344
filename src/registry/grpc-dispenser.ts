import type * as grpc from '@grpc/grpc-js';
import {
  BerthError,
  errorMessage,
  type Lifecycle,
  LifecycleController,
  type LifecycleState,
  type Logger,
  type PluginInstanceInfo,
  silentLogger,
} from '../common/index.js';
import { copyInfo, sameDefinition } from './instance-info.js';
import { GRPC_DISPENSER_DEFAULTS } from './registry-options.js';
import type { PluginDispenser, Registry } from './types.js';

/** What the dispenser needs of a registry: its events, and its instances to check them against. */
export type RegistryEvents = Pick<Registry, 'subscribe' | 'listInstances'>;

export interface GrpcDispenserOptions {
  /**
   * The registry whose events close clients of instances that went away or
   * changed. Optional here because the registry usually takes this dispenser
   * in its own options: then create the dispenser first and `attach` it.
   */
  registry?: RegistryEvents;
  logger?: Logger;
  /** How long a new client may take to become ready (real time; gRPC deadlines are wall-clock). */
  readyTimeoutMs?: number;
}

/**
 * Lifecycle: usable from creation (the registry may dispense before anyone
 * calls start); start() only marks it running; stop() closes every client,
 * stops watching the registry, and refuses later dispenses (BERTH_SHUT_DOWN).
 */
export interface GrpcDispenser extends Lifecycle {
  /** Resolves with a ready @grpc/grpc-js Client for the instance's socket. */
  dispenser: PluginDispenser;
  /** Starts watching a registry (once; a second attach throws). */
  attach(registry: RegistryEvents): void;
}

interface CachedClient {
  /** The definition the client was made for. */
  info: PluginInstanceInfo;
  /** Made once grpc-js is loaded (the first dispense loads it). */
  client: grpc.Client | undefined;
  ready: Promise<grpc.Client>;
}

/**
 * grpc-js, loaded by the first dispense: a node whose handlers never ask for
 * a client (most plugin types) does not load it (issue 20: an idle node's heap).
 */
let grpcModule: Promise<typeof grpc> | undefined;
const loadGrpc = () => {
  grpcModule ??= import('@grpc/grpc-js');
  return grpcModule;
};

/**
 * A dispenser of generic gRPC clients, one per instance (type, name, allocId),
 * reused while that instance lives and closed once it is deregistered or
 * re-registered with a different definition.
 */
export function createGrpcDispenser(options: GrpcDispenserOptions = {}): GrpcDispenser {
  const logger = options.logger ?? silentLogger;
  const readyTimeoutMs = options.readyTimeoutMs ?? GRPC_DISPENSER_DEFAULTS.readyTimeoutMs;
  const clients = new Map<string, CachedClient>();
  const stop = new AbortController();
  let closed = false;
  const lifecycle = new LifecycleController({
    onStop: () => {
      closed = true;
      stop.abort();
      for (const key of [...clients.keys()]) drop(key, 'dispenser stopped');
    },
  });
  let registry: RegistryEvents | undefined;

  const drop = (key: string, reason: string) => {
    const entry = clients.get(key);
    if (entry === undefined) return;
    clients.delete(key);
    entry.client?.close();
    logger.debug(
      { type: entry.info.type, name: entry.info.name, allocId: entry.info.allocId, reason },
      'closed plugin client',
    );
  };

  // Events are handled after the fact, so each one is checked against the registry as it is now:
  // a stale event must not close the client of an instance that has since come back unchanged.
  const revalidate = (key: string) => {
    const entry = clients.get(key);
    if (entry === undefined) return;
    const { type, name, allocId } = entry.info;
    const now = registry?.listInstances(type, name).find((e) => e.allocId === allocId);
    if (now === undefined) drop(key, 'deregistered');
    else if (!sameDefinition(entry.info, now)) drop(key, 'updated');
  };

  const watch = async (watched: RegistryEvents) => {
    try {
      for await (const event of watched.subscribe(undefined, { signal: stop.signal })) {
        if (event.type === 'lagged') {
          for (const key of [...clients.keys()]) revalidate(key);
        } else if (event.type === 'deregistered' || event.type === 'updated') {
          revalidate(instanceKey(event.plugin));
        }
      }
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'grpc dispenser stopped watching the registry');
    }
  };
  const attach = (target: RegistryEvents) => {
    if (registry !== undefined)
      throw new BerthError('BERTH_INVALID_ARGUMENT', 'grpc dispenser is already attached');
    registry = target;
    void watch(target);
  };
  if (options.registry !== undefined) attach(options.registry);

  const dispenser: PluginDispenser = (info) => {
    if (closed) throw new BerthError('BERTH_SHUT_DOWN', 'the gRPC plugin dispenser was stopped');
    const socketPath = info.connectionInfo?.socketPath ?? '';
    if (socketPath === '') {
      throw new BerthError(
        'BERTH_SOCKET_PATH_EMPTY',
        `plugin ${info.name} (type ${info.type}) has no socket path to connect to`,
      );
    }
    const key = instanceKey(info);
    const cached = clients.get(key);
    if (cached !== undefined && sameDefinition(cached.info, info)) return cached.ready;
    drop(key, 'definition changed');
    // Cached at once, so a second dispense while grpc-js loads shares this one.
    const ready = loadGrpc().then((loaded) => connect(loaded, entry, key, socketPath, info));
    const entry: CachedClient = { info: copyInfo(info), client: undefined, ready };
    clients.set(key, entry);
    return ready;
  };

  const connect = (
    loaded: typeof grpc,
    entry: CachedClient,
    key: string,
    socketPath: string,
    info: PluginInstanceInfo,
  ): Promise<grpc.Client> => {
    if (clients.get(key) !== entry) {
      // Dropped (stopped, deregistered, redefined) while grpc-js loaded.
      throw new BerthError(
        closed ? 'BERTH_SHUT_DOWN' : 'BERTH_DIAL_FAILED',
        `plugin ${info.name} (type ${info.type}) at ${socketPath}: the client was dropped before it connected`,
      );
    }
    const client = new loaded.Client(`unix:${socketPath}`, loaded.credentials.createInsecure());
    entry.client = client;
    return new Promise<grpc.Client>((resolve, reject) => {
      client.waitForReady(Date.now() + readyTimeoutMs, (err) => {
        if (err === undefined || err === null) {
          resolve(client);
          return;
        }
        if (clients.get(key)?.client === client) clients.delete(key);
        client.close();
        reject(
          new BerthError(
            'BERTH_DIAL_FAILED',
            `plugin ${info.name} (type ${info.type}) at ${socketPath} did not become ready ` +
              `within ${readyTimeoutMs} ms: ${err.message}`,
            { cause: err },
          ),
        );
      });
    });
  };

  return {
    dispenser,
    attach,
    get state(): LifecycleState {
      return lifecycle.state;
    },
    start: (signal) => lifecycle.start(signal),
    stop: () => lifecycle.stop(),
    [Symbol.asyncDispose]: () => lifecycle.stop(),
  };
}

function instanceKey(info: PluginInstanceInfo): string {
  return JSON.stringify([info.type, info.name, info.allocId]);
}
