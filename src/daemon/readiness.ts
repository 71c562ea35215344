import { statSync } from 'node:fs';

/**
 * Why the plugins directory cannot serve plugins right now (undefined when it
 * can): gone, or replaced by a file. Checked on each /readyz, so readiness
 * reflects a directory the watcher can no longer watch.
 */
export function pluginsDirProblem(pluginsDir: string): string | undefined {
  try {
    if (!statSync(pluginsDir).isDirectory()) return `the plugins directory ${pluginsDir} is not a directory`;
    return undefined;
  } catch (err) {
    return `the plugins directory ${pluginsDir} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}
