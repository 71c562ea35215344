import { join } from 'node:path';
import { defaultDataDir, parseHostPort } from '../daemon/contract.js';
import type { ApiTarget } from './api-client.js';

export interface ApiTargetFlags {
  api?: string;
  dataDir?: string;
}

/**
 * Which daemon a client command talks to: `--api PATH|HOST:PORT`, else the
 * socket in `--data-dir`, else the socket in the default data directory
 * (the same one `berth run` uses).
 */
export function resolveApiTarget(flags: ApiTargetFlags, env: NodeJS.ProcessEnv = process.env): ApiTarget {
  if (flags.api !== undefined) {
    const tcp = flags.api.includes('/') ? undefined : parseHostPort(flags.api);
    return tcp ? { tcp } : { socketPath: flags.api };
  }
  return { socketPath: join(flags.dataDir ?? defaultDataDir(env), 'berth.sock') };
}
