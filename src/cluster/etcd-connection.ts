import { readFileSync } from 'node:fs';
import { Etcd3, type IOptions } from 'etcd3';
import { type BackoffSetting, BerthError, errorMessage, nextBackoffMs } from '../common/index.js';
import { CLUSTER_DEFAULTS, type EtcdConnectionSettings } from './cluster-options.js';

type WatchBackoff = NonNullable<NonNullable<IOptions['faultHandling']>['watchBackoff']>;

/**
 * One etcd client built from berth's connection settings (endpoints, TLS, user
 * and password). The cluster writer, the cluster reader and the object
 * manager's etcd source take the same settings, so one config block reaches all.
 *
 * Unary calls get a wall-clock deadline (a dead member must fail a call, not
 * hang it); streams stay open. The watch reconnect backoff follows berth's
 * policy instead of etcd3's default (up to ~30 s), so a reader resumes soon
 * after an outage ends.
 */
export function createEtcdClient(
  settings: EtcdConnectionSettings,
  options: { callTimeoutMs?: number; watchBackoff?: BackoffSetting } = {},
): Etcd3 {
  if (settings.endpoints.length === 0) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', 'etcd connection needs at least one endpoint');
  }
  const callTimeoutMs = options.callTimeoutMs ?? CLUSTER_DEFAULTS.callTimeoutMs;
  const config: IOptions = {
    hosts: settings.endpoints,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + callTimeoutMs }),
    faultHandling: {
      // etcd3's default per-host circuit breaker refuses every call for 5 s after three failures,
      // which outlasts a short lease TTL once etcd is back; berth's callers retry with their own backoff.
      host: () => passThroughPolicy,
      watchBackoff: watchBackoff(options.watchBackoff ?? { initialMs: 100, maxMs: 2_000, factor: 2 }),
    },
  };
  if (settings.tls !== undefined) {
    config.credentials = {
      rootCertificate: readPem('tls.ca', settings.tls.ca),
      ...(settings.tls.key === undefined ? {} : { privateKey: readPem('tls.key', settings.tls.key) }),
      ...(settings.tls.cert === undefined ? {} : { certChain: readPem('tls.cert', settings.tls.cert) }),
    };
  }
  if (settings.auth !== undefined) {
    config.auth = { username: settings.auth.username, password: settings.auth.password };
  }
  return new Etcd3(config);
}

function readPem(what: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new BerthError('BERTH_CONFIG_INVALID', `etcd ${what}: cannot read ${path}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
}

type HostPolicy = ReturnType<NonNullable<NonNullable<IOptions['faultHandling']>['host']>>;

/** A cockatiel-shaped policy that just runs the call. */
const passThroughPolicy = {
  execute: <T>(fn: (context: { signal: AbortSignal }) => T | PromiseLike<T>) =>
    Promise.resolve().then(() => fn({ signal: new AbortController().signal })),
} as unknown as HostPolicy;

/** etcd3 asks a cockatiel-shaped backoff for each reconnect delay; this one follows a BackoffSetting. */
function watchBackoff(setting: BackoffSetting): WatchBackoff {
  const step = (previous: number): WatchBackoff & { duration: number } => {
    const duration = nextBackoffMs(setting, previous);
    return { duration, next: () => step(duration) } as WatchBackoff & { duration: number };
  };
  return { next: () => step(0) } as unknown as WatchBackoff;
}
