import { errorMessage, type Logger } from '../common/index.js';
import type { DaemonConfig } from './config/config.js';
import type { LogLevel } from './config/config-schema.js';

/** The object-manager settings a reload changes in place: the Cache strategy's TTL and the pod caps. */
export interface ObjectLimits {
  ttlMs: number;
  maxPods: number;
  maxReferencesPerPod: number;
}
const OBJECT_LIMIT_KEYS = ['ttlMs', 'maxPods', 'maxReferencesPerPod'] as const satisfies ReadonlyArray<
  keyof ObjectLimits
>;

/** The reloadable object limits of a config. */
export function objectLimitsOf(objects: DaemonConfig['objects']): ObjectLimits {
  return { ttlMs: objects.ttlMs, maxPods: objects.maxPods, maxReferencesPerPod: objects.maxReferencesPerPod };
}

/** What a reload can change in the running daemon. */
export interface ReloadTarget {
  setLogLevel(level: LogLevel): void;
  /** Replaces the accepted versions of a versioned handler (new registrations use them). */
  setHandlerVersions(type: string, versions: readonly string[]): void;
  /** New object limits: later freshness checks use the TTL, later pod applies the caps. */
  setObjectLimits(limits: ObjectLimits): void;
}

export interface ReloadPlan {
  /** Settings the running daemon takes on now. */
  applied: string[];
  /** Settings that differ but take effect only after a restart. */
  needsRestart: string[];
}

/**
 * Compares the running config with a freshly loaded one. The log level, the
 * version lists of versioned handlers, the objects' Cache TTL and the pod caps
 * change safely in place (the caps bind later applies; registered pods stay);
 * anything else that differs (paths, listeners, the object source and
 * strategy, timeouts, handler types...) is named as needing a restart, by its
 * key.
 */
export function planReload(running: DaemonConfig, next: DaemonConfig): ReloadPlan {
  const applied: string[] = [];
  const needsRestart: string[] = [];
  if (running.logLevel !== next.logLevel) applied.push(`logLevel (${running.logLevel} → ${next.logLevel})`);
  const before = new Map(running.handlers.map((h) => [h.type, h.versions]));
  const after = new Map(next.handlers.map((h) => [h.type, h.versions]));
  const sameTypes = before.size === after.size && [...after.keys()].every((type) => before.has(type));
  if (sameTypes) {
    for (const [type, versions] of after) {
      if (!sameJson(before.get(type), versions)) applied.push(`handlers[${type}].versions`);
    }
  } else {
    needsRestart.push('handlers (types added or removed)');
  }
  for (const key of OBJECT_LIMIT_KEYS) {
    if (running.objects[key] !== next.objects[key])
      applied.push(`objects.${key} (${running.objects[key]} → ${next.objects[key]})`);
  }
  for (const key of Object.keys(next.objects).sort()) {
    if ((OBJECT_LIMIT_KEYS as readonly string[]).includes(key)) continue;
    const k = key as keyof DaemonConfig['objects'];
    if (!sameJson(running.objects[k], next.objects[k])) needsRestart.push(`objects.${key}`);
  }
  const keys = new Set([...Object.keys(running), ...Object.keys(next)]);
  for (const key of [...keys].sort()) {
    if (key === 'logLevel' || key === 'handlers' || key === 'objects') continue;
    if (!sameJson(running[key as keyof DaemonConfig], next[key as keyof DaemonConfig]))
      needsRestart.push(key);
  }
  return { applied, needsRestart };
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export interface ReloadOptions {
  /** Loads the config again, the way `berth run` did (file, then the same flags). */
  load(): DaemonConfig;
  running: DaemonConfig;
  target: ReloadTarget;
  logger: Logger;
}

/**
 * SIGHUP: reload the config file. An invalid file changes nothing and says
 * why; otherwise one line says what was applied and what needs a restart.
 * Returns the config now in effect (the running one with the applied changes).
 */
export function reloadConfig(options: ReloadOptions): DaemonConfig {
  const { running, logger } = options;
  let next: DaemonConfig;
  try {
    next = options.load();
  } catch (err) {
    logger.warn(
      { file: running.configFile ?? null },
      `config reload refused, keeping the running config: ${errorMessage(err)}`,
    );
    return running;
  }
  const plan = planReload(running, next);
  const effective: DaemonConfig = { ...running };
  if (running.logLevel !== next.logLevel) {
    options.target.setLogLevel(next.logLevel);
    effective.logLevel = next.logLevel;
  }
  if (OBJECT_LIMIT_KEYS.some((key) => running.objects[key] !== next.objects[key])) {
    const limits = objectLimitsOf(next.objects);
    options.target.setObjectLimits(limits);
    effective.objects = { ...running.objects, ...limits };
  }
  if (!plan.needsRestart.some((key) => key.startsWith('handlers'))) {
    for (const handler of next.handlers) options.target.setHandlerVersions(handler.type, handler.versions);
    effective.handlers = next.handlers.map((h) => ({ type: h.type, versions: [...h.versions] }));
  }
  const applied = plan.applied.length === 0 ? 'nothing' : plan.applied.join(', ');
  const restart = plan.needsRestart.length === 0 ? 'nothing' : plan.needsRestart.join(', ');
  logger.info(
    { file: running.configFile ?? null, applied: plan.applied, needsRestart: plan.needsRestart },
    `config reloaded: applied ${applied}; needs a restart: ${restart}`,
  );
  return effective;
}
