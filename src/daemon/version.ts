import { readFileSync } from 'node:fs';

/**
 * berth's version from its package.json, found by walking up from this module
 * (src/daemon under tsx, dist/src/daemon when compiled).
 */
export function berthVersion(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'berth' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not at this level
    }
  }
  return 'unknown';
}
