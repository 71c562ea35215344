import { z } from 'zod';
import { builtinHandlers } from '../../handlers/builtin-handlers.js';
import type { OptionsSchemaKit } from '../../handlers/types.js';
import { clusterSchemas } from './cluster-config.js';
import { BUILTIN_HANDLER_TYPES, LOG_FORMATS, LOG_LEVELS } from './defaults.js';
import { durationProblem, parseDuration } from './duration.js';
import { parseHostPort } from './listen-address.js';

/**
 * The config file (YAML or JSON), as zod schemas. Every key is optional;
 * unknown keys are errors so a typo is reported instead of ignored. Error
 * messages are written to be shown after the key's path
 * (`objects.strategy: expected one of Watch|Cache|Get`).
 */
export const OBJECT_STRATEGIES = ['Watch', 'Cache', 'Get'] as const;
export const OBJECT_SOURCE_TYPES = ['directory', 'etcd', 'kubernetes'] as const;

/** The largest event ring: replaying more than this on a reconnect is a re-list's job. */
export const EVENT_RING_SIZE_MAX = 100_000;

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: () => `expected one of ${values.join('|')}` });
}

function buildConfigFileSchema() {
  const cluster = clusterSchemas();
  const text = z.string({ error: () => 'expected a string' }).min(1, { error: 'must not be empty' });

  /**
   * A duration; `positive` refuses 0 where zero time means nothing (a timeout,
   * a period). Every duration must fit Node's timers (below 2^31 ms, about 24.8
   * days): a longer one would fire at once.
   */
  function durationOf(positive: boolean) {
    return z.unknown().transform((value, ctx): number => {
      const ms = typeof value === 'string' || typeof value === 'number' ? parseDuration(value) : undefined;
      if (ms === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `expected a duration such as "500ms", "10s" or "2m" (or milliseconds), got ${JSON.stringify(value)}`,
        });
        return z.NEVER;
      }
      const problem = durationProblem(ms, positive);
      if (problem !== undefined) {
        ctx.addIssue({ code: 'custom', message: `${problem}, got ${JSON.stringify(value)}` });
        return z.NEVER;
      }
      return ms;
    });
  }
  const duration = durationOf(false);
  const positiveDuration = durationOf(true);

  const hostName = z
    .string({ error: () => 'expected a host name' })
    .regex(/^[A-Za-z0-9.-]{1,253}$/, { error: 'expected a DNS host name such as berth.example.com' });

  const positiveInt = z
    .number({ error: () => 'expected a number' })
    .int({ error: 'expected a whole number' })
    .positive({ error: 'expected a number greater than 0' });

  /** What a handler type's config section is built from (handlers/types.ts OptionsSchemaKit). */
  const HANDLER_KIT: OptionsSchemaKit = { z, duration, text, positiveInt };

  const listen = z.string({ error: () => 'expected "HOST:PORT"' }).transform((value, ctx) => {
    const address = parseHostPort(value);
    if (!address) {
      ctx.addIssue({
        code: 'custom',
        message: `expected "HOST:PORT" (e.g. 127.0.0.1:7878), got ${JSON.stringify(value)}`,
      });
      return z.NEVER;
    }
    return address;
  });

  const handler = z.strictObject({
    type: text,
    versions: z.array(text, { error: () => 'expected a list of version strings' }).min(1, {
      error: 'expected at least one version',
    }),
  });

  const objectSource = z.preprocess(
    // `source: etcd` is shorthand for `source: { type: etcd }`.
    (value) => (typeof value === 'string' ? { type: value } : value),
    z
      .strictObject({
        type: oneOf(OBJECT_SOURCE_TYPES),
        root: text.optional(),
        endpoints: z
          .array(text, { error: () => 'expected a list of URLs' })
          .min(1)
          .optional(),
        prefix: z.string({ error: () => 'expected a string' }).optional(),
        kubeconfig: text.optional(),
        tls: cluster.etcdTls.optional(),
        auth: cluster.etcdAuth.optional(),
      })
      .superRefine((source, ctx) => {
        const allowed: Record<string, string[]> = {
          directory: ['root'],
          etcd: ['endpoints', 'prefix', 'tls', 'auth'],
          kubernetes: ['kubeconfig'],
        };
        for (const key of ['root', 'endpoints', 'prefix', 'kubeconfig', 'tls', 'auth'] as const) {
          if (source[key] !== undefined && !allowed[source.type]?.includes(key)) {
            ctx.addIssue({ code: 'custom', path: [key], message: `not used by a ${source.type} source` });
          }
        }
      }),
  );

  const configFileSchema = z.strictObject({
    dataDir: text.optional(),
    pluginsDir: text.optional(),
    deprecatedPluginsDir: text.optional(),
    listen: listen.optional(),
    logLevel: oneOf(LOG_LEVELS).optional(),
    mode: oneOf(['registrar', 'observe'] as const).optional(),
    force: z.boolean({ error: () => 'expected true or false' }).optional(),
    logFormat: oneOf(LOG_FORMATS).optional(),
    handlers: z
      .array(handler, { error: () => 'expected a list of { type, versions }' })
      .superRefine((handlers, ctx) => {
        const seen = new Map<string, number>();
        handlers.forEach((h, i) => {
          if ((BUILTIN_HANDLER_TYPES as readonly string[]).includes(h.type)) {
            ctx.addIssue({ code: 'custom', path: [i, 'type'], message: `${h.type} has a built-in handler` });
          }
          const first = seen.get(h.type);
          if (first !== undefined) {
            ctx.addIssue({ code: 'custom', path: [i, 'type'], message: `duplicate of handlers[${first}]` });
          } else seen.set(h.type, i);
        });
      })
      .optional(),
    resyncPeriod: positiveDuration.optional(),
    rescanInterval: positiveDuration.optional(),
    timeouts: z
      .strictObject({
        dial: positiveDuration.optional(),
        getInfo: positiveDuration.optional(),
        notify: positiveDuration.optional(),
      })
      .optional(),
    /** Retry policy of a socket whose registration failed (a BackoffSetting; factor bounded to 1..10). */
    backoff: z
      .strictObject({
        initial: positiveDuration.optional(),
        max: positiveDuration.optional(),
        factor: z
          .number({ error: () => 'expected a number' })
          .min(1, { error: 'expected a number from 1 to 10' })
          .max(10, { error: 'expected a number from 1 to 10' })
          .optional(),
      })
      .optional(),
    liveness: z
      .strictObject({
        enabled: z.boolean({ error: () => 'expected true or false' }).optional(),
        period: positiveDuration.optional(),
        timeout: positiveDuration.optional(),
        failureThreshold: positiveInt.optional(),
        /** Keepalive pings sent per period at most, round-robin over registered plugins. */
        pingsPerPeriod: positiveInt.optional(),
      })
      .optional(),
    registry: z.strictObject({ subscriberQueueSize: positiveInt.optional() }).optional(),
    objects: z
      .strictObject({
        source: objectSource.optional(),
        strategy: oneOf(OBJECT_STRATEGIES).optional(),
        ttl: duration.optional(),
        maxPods: positiveInt.optional(),
        maxReferencesPerPod: positiveInt.optional(),
        maxPodBytes: positiveInt.optional(),
      })
      .optional(),
    shutdownTimeout: positiveDuration.optional(),
    api: z
      .strictObject({
        tokenFile: text.optional(),
        allowedHosts: z.array(hostName, { error: () => 'expected a list of host names' }).optional(),
        maxConnections: positiveInt.optional(),
        maxEventStreams: positiveInt.optional(),
        eventStreamBufferBytes: positiveInt.optional(),
        eventRingSize: z
          .number({ error: () => 'expected a whole number' })
          .int({ error: 'expected a whole number' })
          .min(0, { error: 'must be at least 0' })
          .max(EVENT_RING_SIZE_MAX, { error: `must be at most ${EVENT_RING_SIZE_MAX}` })
          .optional(),
        headersTimeout: positiveDuration.optional(),
        idleTimeout: positiveDuration.optional(),
        maxUnauthenticatedConnections: positiveInt.optional(),
        unauthenticatedIdleTimeout: positiveDuration.optional(),
      })
      .optional(),
    tls: z
      .strictObject(
        { cert: text, key: text, clientCA: text.optional() },
        {
          error: () => 'expected { cert, key, clientCA? } (file paths)',
        },
      )
      .optional(),
    metrics: z
      .strictObject({ anonymous: z.boolean({ error: () => 'expected true or false' }).optional() })
      .optional(),
    /** Options of the built-in handlers: one section per type, each described (and defaulted) by the type's own *-options.ts. */
    handlerOptions: z
      .strictObject(
        Object.fromEntries(
          BUILTIN_HANDLER_TYPES.map((type) => [
            type,
            builtinHandlers[type].options.schema(HANDLER_KIT).optional(),
          ]),
        ),
      )
      .optional(),
    cluster: cluster.cluster.optional(),
  });

  /**
   * An etcd object source names its own endpoints, or shares the cluster view's
   * connection (`cluster.etcd`: endpoints, TLS, user and password).
   */
  const configFileSchemaChecked = configFileSchema.superRefine((file, ctx) => {
    const source = file.objects?.source;
    if (source?.type === 'etcd' && source.endpoints === undefined && file.cluster === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['objects', 'source', 'endpoints'],
        message: 'required for an etcd source (or configure `cluster.etcd`, whose connection it then shares)',
      });
    }
    if (
      source?.type === 'etcd' &&
      source.endpoints === undefined &&
      (source.tls !== undefined || source.auth !== undefined)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['objects', 'source', 'endpoints'],
        message: 'tls and auth go with endpoints; without endpoints the source shares `cluster.etcd` whole',
      });
    }
  });
  return configFileSchemaChecked;
}

let configFileSchemaBuilt: ReturnType<typeof buildConfigFileSchema> | undefined;

/**
 * The config file's schema (with the handler types' sections), built on
 * first use: building it was about 3 ms of every start, and a start without
 * a config file never validates one.
 */
export function configFileSchema(): ReturnType<typeof buildConfigFileSchema> {
  configFileSchemaBuilt ??= buildConfigFileSchema();
  return configFileSchemaBuilt;
}

export type ConfigFile = z.output<ReturnType<typeof buildConfigFileSchema>>;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = (typeof LOG_FORMATS)[number];
export type ObjectStrategy = (typeof OBJECT_STRATEGIES)[number];
