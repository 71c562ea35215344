import { z } from 'zod';
import { BUILTIN_HANDLER_TYPES, LOG_LEVELS } from './defaults.js';
import { parseDuration } from './duration.js';
import { parseHostPort } from './listen-address.js';

/**
 * The config file (YAML or JSON), as zod schemas. Every key is optional;
 * unknown keys are errors so a typo is reported instead of ignored. Error
 * messages are written to be shown after the key's path
 * (`objects.strategy: expected one of Watch|Cache|Get`).
 */
export const OBJECT_STRATEGIES = ['Watch', 'Cache', 'Get'] as const;
export const OBJECT_SOURCE_TYPES = ['directory', 'etcd', 'kubernetes'] as const;

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: () => `expected one of ${values.join('|')}` });
}

const text = z.string({ error: () => 'expected a string' }).min(1, { error: 'must not be empty' });

const duration = z.unknown().transform((value, ctx): number => {
  const ms = typeof value === 'string' || typeof value === 'number' ? parseDuration(value) : undefined;
  if (ms === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `expected a duration such as "500ms", "10s" or "2m" (or milliseconds), got ${JSON.stringify(value)}`,
    });
    return z.NEVER;
  }
  return ms;
});

const positiveInt = z
  .number({ error: () => 'expected a number' })
  .int({ error: 'expected a whole number' })
  .positive({ error: 'expected a number greater than 0' });

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
    })
    .superRefine((source, ctx) => {
      const allowed: Record<string, string[]> = {
        directory: ['root'],
        etcd: ['endpoints', 'prefix'],
        kubernetes: ['kubeconfig'],
      };
      for (const key of ['root', 'endpoints', 'prefix', 'kubeconfig'] as const) {
        if (source[key] !== undefined && !allowed[source.type]?.includes(key)) {
          ctx.addIssue({ code: 'custom', path: [key], message: `not used by a ${source.type} source` });
        }
      }
      if (source.type === 'etcd' && source.endpoints === undefined) {
        ctx.addIssue({ code: 'custom', path: ['endpoints'], message: 'required for an etcd source' });
      }
    }),
);

export const configFileSchema = z.strictObject({
  dataDir: text.optional(),
  pluginsDir: text.optional(),
  deprecatedPluginsDir: text.optional(),
  listen: listen.optional(),
  logLevel: oneOf(LOG_LEVELS).optional(),
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
  resyncPeriod: duration.optional(),
  rescanInterval: duration.optional(),
  timeouts: z
    .strictObject({ dial: duration.optional(), getInfo: duration.optional(), notify: duration.optional() })
    .optional(),
  liveness: z
    .strictObject({
      enabled: z.boolean({ error: () => 'expected true or false' }).optional(),
      period: duration.optional(),
      timeout: duration.optional(),
      failureThreshold: positiveInt.optional(),
    })
    .optional(),
  registry: z.strictObject({ subscriberQueueSize: positiveInt.optional() }).optional(),
  objects: z
    .strictObject({
      source: objectSource.optional(),
      strategy: oneOf(OBJECT_STRATEGIES).optional(),
      ttl: duration.optional(),
    })
    .optional(),
  shutdownTimeout: duration.optional(),
  /** Options of the built-in handlers, one section per type (defaults in src/handlers/<type>/*-options.ts). */
  handlerOptions: z
    .strictObject({
      CSIPlugin: z.strictObject({ callTimeout: duration.optional() }).optional(),
      DevicePlugin: z
        .strictObject({
          /** Where berth serves the legacy kubelet.sock; `false` serves none. */
          socketDir: z
            .union([text, z.literal(false)], { error: () => 'expected a directory path or false' })
            .optional(),
          gracePeriod: duration.optional(),
        })
        .optional(),
      DRAPlugin: z
        .strictObject({
          wipeDelay: duration.optional(),
          callTimeout: duration.optional(),
          maxClaimsPerCall: positiveInt.optional(),
        })
        .optional(),
    })
    .optional(),
});

export type ConfigFile = z.output<typeof configFileSchema>;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type ObjectStrategy = (typeof OBJECT_STRATEGIES)[number];
