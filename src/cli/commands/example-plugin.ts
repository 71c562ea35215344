import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { errorMessage, isBerthError } from '../../common/index.js';
import {
  dataDirLayout,
  defaultPaths,
  EXAMPLE_PLUGIN_TYPE,
  EXAMPLE_PLUGIN_VERSIONS,
  UNIX_SOCKET_PATH_MAX_BYTES,
} from '../../daemon/contract.js';
import { usageError } from '../cli-error.js';

interface ExampleFlags {
  name: string;
  type: string;
  versions: string;
  endpoint?: string;
  pluginsDir?: string;
  dataDir?: string;
  json?: boolean;
}

export function exampleSocketPath(flags: Pick<ExampleFlags, 'name' | 'pluginsDir' | 'dataDir'>): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(flags.name)) {
    throw usageError(
      `--name ${JSON.stringify(flags.name)}: use letters, digits, '.', '_' and '-' (it names the socket file)`,
    );
  }
  const pluginsDir = flags.pluginsDir ?? dataDirLayout(flags.dataDir ?? defaultPaths().dataDir).pluginsDir;
  const socketPath = join(pluginsDir, `${flags.name}.sock`);
  if (Buffer.byteLength(socketPath) > UNIX_SOCKET_PATH_MAX_BYTES) {
    throw usageError(
      `socket path ${socketPath} is longer than ${UNIX_SOCKET_PATH_MAX_BYTES} bytes; use a shorter --plugins-dir`,
    );
  }
  return socketPath;
}

export function parseExampleVersions(text: string): string[] {
  const versions = text
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
  if (versions.length === 0) throw usageError('--versions: give at least one version, e.g. v1beta1,v1beta2');
  return versions;
}

export function examplePluginCommand(program: Command): void {
  program
    .command('example-plugin')
    .description('run a plugin that registers with the daemon, to try berth without writing one')
    .requiredOption('--name <name>', 'plugin name; the socket is <plugins-dir>/<name>.sock')
    .option('--type <type>', 'plugin type reported to the daemon', EXAMPLE_PLUGIN_TYPE)
    .option('--versions <list>', 'supported versions, comma-separated', EXAMPLE_PLUGIN_VERSIONS.join(','))
    .option('--endpoint <path>', 'service endpoint reported in GetInfo (default: the registration socket)')
    .option('--plugins-dir <dir>', "the daemon's plugins directory (default: <data-dir>/plugins_registry)")
    .option(
      '--data-dir <dir>',
      "the daemon's data directory (default: $BERTH_DATA_DIR, else /var/lib/berth as root, else $XDG_STATE_HOME/berth, else ~/.local/state/berth)",
    )
    .option('--json', 'print one JSON object per line instead of text', false)
    .action(async (flags: ExampleFlags) => {
      const socketPath = exampleSocketPath(flags);
      const versions = parseExampleVersions(flags.versions);
      const say = (event: string, fields: Record<string, unknown>, text: string) => {
        console.log(flags.json ? JSON.stringify({ event, ...fields }) : `example-plugin: ${text}`);
      };
      mkdirSync(join(socketPath, '..'), { recursive: true });
      const { createExamplePlugin } = await import('../../registration/index.js'); // gRPC, loaded only here
      const plugin = createExamplePlugin({
        socketPath,
        name: flags.name,
        type: flags.type,
        versions,
        ...(flags.endpoint === undefined ? {} : { endpoint: flags.endpoint }),
      });
      try {
        await plugin.start();
      } catch (err) {
        throw new Error(`cannot serve on ${socketPath}: ${errorMessage(err)}`);
      }
      say(
        'serving',
        { name: flags.name, type: flags.type, versions, socketPath },
        `serving ${flags.name} (type ${flags.type}, versions ${versions.join(',')}) on ${socketPath}; Ctrl-C stops it`,
      );

      let stopping = false;
      const stop = () => {
        if (stopping) return;
        stopping = true;
        void plugin.stop().then(
          () => say('stopped', { socketPath }, `stopped; removed ${socketPath}`),
          (err: unknown) => console.error(`berth: stopping the example plugin failed: ${errorMessage(err)}`),
        );
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);

      while (!stopping) {
        try {
          const status = await plugin.nextStatus(Number.POSITIVE_INFINITY);
          say(
            'status',
            { pluginRegistered: status.pluginRegistered, error: status.error },
            status.pluginRegistered ? 'registered with the daemon' : `registration rejected: ${status.error}`,
          );
        } catch (err) {
          if (stopping || isBerthError(err, 'BERTH_SHUT_DOWN')) break;
          throw err;
        }
      }
      await plugin.stop();
    });
}
