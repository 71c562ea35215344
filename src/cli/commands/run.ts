import type { Command } from 'commander';
import { systemClock } from '../../common/index.js';
import { formatHostPort, LOG_LEVELS } from '../../daemon/contract.js';

interface RunFlags {
  dataDir?: string;
  pluginsDir?: string;
  listen?: string;
  config?: string;
  logLevel?: string;
  apiTokenFile?: string;
  observe?: boolean;
  force?: boolean;
}

export function runCommand(program: Command): void {
  program
    .command('run')
    .description('start the daemon: watch the plugins directory, keep the registry, serve the API')
    .option(
      '--data-dir <dir>',
      'where berth keeps its state, API socket and objects (default: $BERTH_DATA_DIR, else $XDG_STATE_HOME/berth, else ~/.local/state/berth)',
    )
    .option(
      '--plugins-dir <dir>',
      'directory watched for plugin sockets (default: <data-dir>/plugins_registry; on a node with a kubelet, /var/lib/kubelet/plugins_registry with --observe)',
    )
    .option(
      '--observe',
      'observe mode: watch a directory another registrar (a kubelet) owns; read-only calls only, no Notify, no lock (config: mode: observe)',
    )
    .option(
      '--force',
      'register even though a running kubelet seems to own the plugins directory (config: force: true)',
    )
    .option(
      '--listen <host:port>',
      'also serve the API on TCP (default: the unix socket <data-dir>/berth.sock only)',
    )
    .option(
      '--api-token-file <file>',
      'bearer token TCP clients must send; created on first start, 0600 (default: <data-dir>/api-token)',
    )
    .option('--config <file>', 'YAML or JSON config file; flags override it (default: none)')
    .option('--log-level <level>', `${LOG_LEVELS.join('|')} (default: info)`)
    .action(async (flags: RunFlags) => {
      // The daemon (gRPC, fastify, SQLite) is loaded only by the command that runs it.
      const { createDaemon, createDaemonLogger, handleShutdownSignals, loadDaemonConfig } = await import(
        '../../daemon/index.js'
      );
      const config = loadDaemonConfig(flags);
      const logger = createDaemonLogger({ level: config.logLevel });
      const daemon = createDaemon(config, { logger, clock: systemClock });
      let signalled = false;
      handleShutdownSignals({
        stop: () => {
          signalled = true;
          return daemon.stop();
        },
        timeoutMs: config.shutdownTimeoutMs,
        exit: (code) => process.exit(code),
        clock: systemClock,
        logger,
      });
      try {
        await daemon.start();
      } catch (err) {
        // A signal during start-up: the signal handler finishes the stop and exits.
        if (signalled) return;
        throw err;
      }
      const { socketPath, tcp } = daemon.apiAddress;
      const scheme = config.tls ? 'https' : 'http';
      const api = tcp
        ? `${socketPath} and ${scheme}://${formatHostPort(tcp)} (token in ${config.api.tokenFile})`
        : socketPath;
      const role = config.mode === 'observe' ? 'observing (read-only)' : 'watching';
      console.log(`berth: ${role} ${config.pluginsDir} for plugins; API on ${api}`);
    });
}
