import { hostname } from 'node:os';
import { z } from 'zod';
import { CLUSTER_DEFAULTS, type EtcdConnectionSettings } from '../../cluster/index.js';
import { parseDuration } from './duration.js';

/**
 * The `cluster:` section (off when absent) and the etcd connection block it
 * shares with `objects.source` of type etcd: endpoints, TLS files, user and
 * password.
 */
function buildClusterSchemas() {
  const text = z.string({ error: () => 'expected a string' }).min(1, { error: 'must not be empty' });

  const seconds = z.unknown().transform((value, ctx): number => {
    const ms = typeof value === 'string' || typeof value === 'number' ? parseDuration(value) : undefined;
    if (ms === undefined || ms < 2_000 || ms % 1000 !== 0) {
      ctx.addIssue({
        code: 'custom',
        message: `expected whole seconds of at least 2 (etcd's minimum lease TTL), such as "15s", got ${JSON.stringify(value)}`,
      });
      return z.NEVER;
    }
    return ms / 1000;
  });

  const duration = z.unknown().transform((value, ctx): number => {
    const ms = typeof value === 'string' || typeof value === 'number' ? parseDuration(value) : undefined;
    if (ms === undefined || ms <= 0) {
      ctx.addIssue({
        code: 'custom',
        message: `expected a duration such as "10s", got ${JSON.stringify(value)}`,
      });
      return z.NEVER;
    }
    return ms;
  });

  const etcdTlsSchema = z
    .strictObject({ ca: text, cert: text.optional(), key: text.optional() })
    .superRefine((tls, ctx) => {
      if ((tls.cert === undefined) !== (tls.key === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: [tls.cert === undefined ? 'cert' : 'key'],
          message: 'cert and key go together',
        });
      }
    });

  const etcdAuthSchema = z.strictObject({
    username: text,
    password: z.string({ error: () => 'expected a string' }),
  });

  const clusterSchema = z.strictObject({
    etcd: z.strictObject({
      endpoints: z
        .array(text, { error: () => 'expected a list of URLs' })
        .min(1, { error: 'expected at least one URL' }),
      tls: etcdTlsSchema.optional(),
      auth: etcdAuthSchema.optional(),
    }),
    nodeName: text.max(253, { error: 'at most 253 characters' }).optional(),
    prefix: z
      .string({ error: () => 'expected a string' })
      .startsWith('/', { error: 'must start with "/"' })
      .optional(),
    leaseTtl: seconds.optional(),
    /** revoke: entries vanish at shutdown; release: they stay for the TTL, for a restart that adopts them. */
    onShutdown: z.enum(['revoke', 'release'], { error: () => 'expected one of revoke|release' }).optional(),
    /** Whether this daemon also reads the fleet (the API's /v1/cluster routes). Default true. */
    reader: z.boolean({ error: () => 'expected true or false' }).optional(),
    probeInterval: duration.optional(),
    progressTimeout: duration.optional(),
  });
  return { etcdTls: etcdTlsSchema, etcdAuth: etcdAuthSchema, cluster: clusterSchema };
}

let clusterSchemasBuilt: ReturnType<typeof buildClusterSchemas> | undefined;

/**
 * The schemas, built on first use (config-schema.ts builds them with the
 * file's): a start without a config file never validates one.
 */
export function clusterSchemas(): ReturnType<typeof buildClusterSchemas> {
  clusterSchemasBuilt ??= buildClusterSchemas();
  return clusterSchemasBuilt;
}

export type ClusterFile = z.output<ReturnType<typeof buildClusterSchemas>['cluster']>;

/** The resolved `cluster:` section. */
export interface ClusterConfig {
  etcd: EtcdConnectionSettings;
  nodeName: string;
  prefix: string;
  leaseTtlSeconds: number;
  onShutdown: 'revoke' | 'release';
  reader: boolean;
  probeIntervalMs: number;
  progressTimeoutMs: number;
  /** Where the stable instance id of this installation is kept (a restart adopts its own keys). */
  instanceFile: string;
}

export function resolveClusterConfig(
  file: ClusterFile | undefined,
  dataDir: string,
  fromFile: (p: string) => string,
  env: Record<string, string | undefined>,
): ClusterConfig | undefined {
  if (file === undefined) return undefined;
  const etcd: EtcdConnectionSettings = { endpoints: file.etcd.endpoints };
  if (file.etcd.tls !== undefined) {
    etcd.tls = { ca: fromFile(file.etcd.tls.ca) };
    if (file.etcd.tls.cert !== undefined) etcd.tls.cert = fromFile(file.etcd.tls.cert);
    if (file.etcd.tls.key !== undefined) etcd.tls.key = fromFile(file.etcd.tls.key);
  }
  if (file.etcd.auth !== undefined) etcd.auth = { ...file.etcd.auth };
  const ttl = file.leaseTtl ?? CLUSTER_DEFAULTS.leaseTtlSeconds;
  return {
    etcd,
    nodeName: file.nodeName ?? env.BERTH_NODE_NAME ?? hostname(),
    prefix: file.prefix ?? CLUSTER_DEFAULTS.prefix,
    leaseTtlSeconds: ttl,
    onShutdown: file.onShutdown ?? 'revoke',
    reader: file.reader ?? true,
    probeIntervalMs: file.probeInterval ?? CLUSTER_DEFAULTS.probeIntervalMs,
    progressTimeoutMs: file.progressTimeout ?? CLUSTER_DEFAULTS.progressTimeoutMs,
    instanceFile: `${dataDir}/cluster-instance`,
  };
}
