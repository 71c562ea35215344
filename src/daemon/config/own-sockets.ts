import { join, relative, resolve } from 'node:path';
import { BerthError } from '../../common/index.js';
import { DEVICE_PLUGIN_LEGACY_SOCKET as LEGACY_SOCKET } from '../../handlers/types.js';

interface OwnSocketsConfig {
  dataDir: string;
  pluginsDir: string;
  deprecatedPluginsDir?: string;
  apiSocketPath: string;
  /** An observer serves no kubelet.sock. */
  mode?: string;
  handlerOptions: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** berth's own sockets: the API socket and, unless turned off, the legacy device-plugin kubelet.sock. */
export function ownSockets(config: OwnSocketsConfig): string[] {
  const own = [config.apiSocketPath];
  const socketDir = config.handlerOptions.DevicePlugin?.socketDir;
  if (socketDir !== false && config.mode !== 'observe') {
    const dir = typeof socketDir === 'string' ? socketDir : join(config.dataDir, LEGACY_SOCKET.defaultSubdir);
    own.push(join(dir, LEGACY_SOCKET.name));
  }
  return own.map((p) => resolve(p));
}

function within(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !rel.startsWith('/');
}

/**
 * Refuses a plugins directory that would make berth probe its own sockets as
 * plugins: the data directory itself, or any directory holding berth.sock or
 * kubelet.sock (the watcher walks subdirectories). BERTH_CONFIG_INVALID, so
 * `berth run` exits 2 naming both paths.
 */
export function assertPluginsDirClear(config: OwnSocketsConfig): void {
  const dirs: Array<[string, string]> = [['pluginsDir', config.pluginsDir]];
  if (config.deprecatedPluginsDir !== undefined)
    dirs.push(['deprecatedPluginsDir', config.deprecatedPluginsDir]);
  const dataDir = resolve(config.dataDir);
  for (const [what, raw] of dirs) {
    const dir = resolve(raw);
    if (dir === dataDir) {
      throw new BerthError(
        'BERTH_CONFIG_INVALID',
        `${what} ${dir} is the data directory ${dataDir}, which holds berth's own sockets: berth would probe itself as a plugin; use a directory of its own (default <data-dir>/plugins_registry)`,
      );
    }
    for (const socket of ownSockets(config)) {
      if (!within(socket, dir)) continue;
      throw new BerthError(
        'BERTH_CONFIG_INVALID',
        `${what} ${dir} contains berth's own socket ${socket}: berth would probe itself as a plugin; use a plugins directory that does not hold it`,
      );
    }
  }
}
