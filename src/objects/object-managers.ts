/**
 * The object manager's composition root: builds the Secret and ConfigMap
 * managers (kubelet pkg/kubelet/secret and configmap) over one source, with
 * the change-detection strategy
 * (configMapAndSecretChangeDetectionStrategy):
 * - 'Get': every read goes to the source; register/unregister do nothing.
 * - 'Cache': TTL store (default TTL 1 min, or getTtl, e.g. the Node annotation).
 * - 'Watch' (default): one list/watch per referenced object, idle ones recycled.
 */
import {
  type BackoffSetting,
  type Clock,
  type Lifecycle,
  LifecycleController,
  type Logger,
  silentLogger,
  systemClock,
} from '../common/index.js';
import { groupResourceOf, isKubeObject, unexpectedObjectTypeError, unknownStrategyError } from './errors.js';
import {
  type CacheBasedManager,
  createCacheBasedManager,
  type Manager,
  type RegisterMode,
} from './manager.js';
import type { GetTtl } from './node-ttl.js';
import { type PodKey, podKeyString } from './object-key.js';
import {
  CHANGE_DETECTION_STRATEGIES,
  type ChangeDetectionStrategy,
  DEFAULT_CHANGE_DETECTION_STRATEGY,
  DEFAULT_OBJECT_TTL_MS,
  DEFAULT_RESYNC_INTERVAL_MS,
} from './objects-options.js';
import { type Pod, validatePod } from './pod.js';
import { getConfigMapNames, getSecretNames } from './references.js';
import type { KubeObject, ObjectResource, ObjectSource } from './source.js';
import { createTtlStore, type TtlStore } from './ttl-store.js';
import { createWatchBasedManager, type WatchBasedManager } from './watch-based-manager.js';

export interface SecretManager {
  getSecret(namespace: string, name: string): Promise<KubeObject>;
  registerPod(pod: Pod): void;
  unregisterPod(pod: Pod): void;
}

export interface ConfigMapManager {
  getConfigMap(namespace: string, name: string): Promise<KubeObject>;
  registerPod(pod: Pod): void;
  unregisterPod(pod: Pod): void;
}

/** Wraps a manager: reads are type-checked as Secrets (a missing kind is accepted, as in list items). */
export function createSecretManager(manager: Manager): SecretManager {
  return {
    getSecret: async (namespace, name) => checkKind(await manager.getObject(namespace, name), 'Secret'),
    registerPod: (pod) => manager.registerPod(pod),
    unregisterPod: (pod) => manager.unregisterPod(pod),
  };
}

export function createConfigMapManager(manager: Manager): ConfigMapManager {
  return {
    getConfigMap: async (namespace, name) => checkKind(await manager.getObject(namespace, name), 'ConfigMap'),
    registerPod: (pod) => manager.registerPod(pod),
    unregisterPod: (pod) => manager.unregisterPod(pod),
  };
}

/** The 'Get' strategy: a read-through to the source; register/unregister are no-ops. */
export function createSimpleManager(source: ObjectSource, resource: ObjectResource): Manager {
  return {
    getObject: (namespace, name) => source.get(resource, namespace, name),
    registerPod: () => {},
    unregisterPod: () => {},
  };
}

function checkKind(object: unknown, kind: 'Secret' | 'ConfigMap'): KubeObject {
  if (!isKubeObject(object)) throw unexpectedObjectTypeError(object);
  if (object.kind !== undefined && object.kind !== kind) throw unexpectedObjectTypeError(object);
  return object;
}

export interface ObjectManagersOptions {
  /** Default 'Watch'. Any other value than Get/Cache/Watch is BERTH_UNKNOWN_STRATEGY. */
  strategy?: ChangeDetectionStrategy | string;
  source: ObjectSource;
  clock?: Clock;
  logger?: Logger;
  /** Cache: the default TTL (1 min). */
  ttlMs?: number;
  /** Cache: consulted on every freshness check, e.g. getObjectTtlFromNode(...). */
  getTtl?: GetTtl;
  /** Watch: the pod resync interval; idle watches stop after 5 × this. Default 1 min. */
  resyncIntervalMs?: number;
  /** Watch: how long a read waits for a new watch's first list. Default 1 s. */
  syncTimeoutMs?: number;
  /** Watch: how often a frozen immutable object is re-checked. Default 60 s. */
  immutableRecheckMs?: number;
  /** Watch: delay between a reflector's failed list/watch cycles. Default 800 ms doubling to 30 s. */
  reflectorBackoff?: BackoffSetting;
  /** 'diff' (default, v1.29+) or 'readd-all' (v1.26–1.28). */
  registerMode?: RegisterMode;
}

export interface ObjectKindStats {
  /** Objects currently referenced (0 for 'Get'). */
  objects: number;
  /** Open list/watch loops (Watch only). */
  watchesOpen: number;
}

export interface ObjectManagersStats {
  strategy: ChangeDetectionStrategy;
  pods: number;
  secrets: ObjectKindStats;
  configMaps: ObjectKindStats;
}

export interface RegisteredPodRefs extends PodKey {
  secrets: string[];
  configMaps: string[];
}

/**
 * Lifecycle (common/lifecycle.ts): start() adds background work (idle-watch
 * recycling), aborting its signal is stop(); stop() ends every watch. The
 * source is the caller's to stop.
 */
export interface ObjectManagers extends Lifecycle {
  readonly strategy: ChangeDetectionStrategy;
  readonly secrets: SecretManager;
  readonly configMaps: ConfigMapManager;
  /** Registers a pod with both managers (validated first, so it is never half registered). */
  registerPod(pod: Pod): void;
  unregisterPod(pod: Pod): void;
  /** Pods registered through registerPod above, with what they reference. */
  pods(): RegisteredPodRefs[];
  stats(): ObjectManagersStats;
}

interface KindParts {
  manager: Manager;
  objects: () => number;
  watchesOpen: () => number;
  start: () => Promise<void>;
  stop: () => Promise<void>;
}

export function createObjectManagers(options: ObjectManagersOptions): ObjectManagers {
  const strategy = options.strategy ?? DEFAULT_CHANGE_DETECTION_STRATEGY;
  if (!isStrategy(strategy)) throw unknownStrategyError(strategy);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger; // the stores name themselves (component: watch-store)
  const source = options.source;

  const build = (resource: ObjectResource, getReferencedObjects: (pod: Pod) => Set<string>): KindParts => {
    if (strategy === 'Get') {
      return {
        manager: createSimpleManager(source, resource),
        objects: () => 0,
        watchesOpen: () => 0,
        start: async () => {},
        stop: async () => {},
      };
    }
    const mode = options.registerMode === undefined ? {} : { mode: options.registerMode };
    if (strategy === 'Cache') {
      const store: TtlStore = createTtlStore({
        getObject: (namespace, name, getOptions) => source.get(resource, namespace, name, getOptions),
        clock,
        defaultTtlMs: options.ttlMs ?? DEFAULT_OBJECT_TTL_MS,
        ...(options.getTtl === undefined ? {} : { getTtl: options.getTtl }),
      });
      const manager: CacheBasedManager = createCacheBasedManager({ store, getReferencedObjects, ...mode });
      return {
        manager,
        objects: () => store.size(),
        watchesOpen: () => 0,
        start: async () => {},
        stop: async () => {},
      };
    }
    const watching: WatchBasedManager = createWatchBasedManager({
      source,
      resource,
      groupResource: groupResourceOf(resource),
      getReferencedObjects,
      clock,
      logger,
      resyncIntervalMs: options.resyncIntervalMs ?? DEFAULT_RESYNC_INTERVAL_MS,
      ...(options.syncTimeoutMs === undefined ? {} : { syncTimeoutMs: options.syncTimeoutMs }),
      ...(options.immutableRecheckMs === undefined ? {} : { immutableRecheckMs: options.immutableRecheckMs }),
      ...(options.reflectorBackoff === undefined ? {} : { reflectorBackoff: options.reflectorBackoff }),
      ...mode,
    });
    return {
      manager: watching,
      objects: () => watching.store.size(),
      watchesOpen: () => watching.store.watchesOpen(),
      start: () => watching.start(),
      stop: () => watching.stop(),
    };
  };

  const secrets = build('secrets', getSecretNames);
  const configMaps = build('configmaps', getConfigMapNames);
  const pods = new Map<string, RegisteredPodRefs>();
  const lifecycle = new LifecycleController({
    onStart: async () => {
      await Promise.all([secrets.start(), configMaps.start()]);
    },
    onStop: async () => {
      await Promise.all([secrets.stop(), configMaps.stop()]);
    },
  });

  return {
    strategy,
    secrets: createSecretManager(secrets.manager),
    configMaps: createConfigMapManager(configMaps.manager),
    registerPod(pod) {
      const key = validatePod(pod);
      secrets.manager.registerPod(pod);
      configMaps.manager.registerPod(pod);
      pods.set(podKeyString(key), {
        ...key,
        secrets: [...getSecretNames(pod)].sort(),
        configMaps: [...getConfigMapNames(pod)].sort(),
      });
    },
    unregisterPod(pod) {
      const key = validatePod(pod);
      secrets.manager.unregisterPod(pod);
      configMaps.manager.unregisterPod(pod);
      pods.delete(podKeyString(key));
    },
    pods: () =>
      [...pods.values()].map((p) => ({ ...p, secrets: [...p.secrets], configMaps: [...p.configMaps] })),
    stats: () => ({
      strategy,
      pods: pods.size,
      secrets: { objects: secrets.objects(), watchesOpen: secrets.watchesOpen() },
      configMaps: { objects: configMaps.objects(), watchesOpen: configMaps.watchesOpen() },
    }),
    get state() {
      return lifecycle.state;
    },
    start: (signal) => lifecycle.start(signal),
    stop: () => lifecycle.stop(),
    [Symbol.asyncDispose]: () => lifecycle.stop(),
  };
}

function isStrategy(value: unknown): value is ChangeDetectionStrategy {
  return typeof value === 'string' && (CHANGE_DETECTION_STRATEGIES as readonly string[]).includes(value);
}
