import type { Command } from 'commander';
import { systemClock } from '../../common/index.js';
import { formatHostPort, LOG_FORMATS, LOG_LEVELS, SYSTEM_PATHS } from '../../daemon/contract.js';
import { loadDaemonModule } from '../daemon-module.js';
import { applyDaemonJitTuning } from '../jit-options.js';

export interface RunFlags {
  dataDir?: string;
  pluginsDir?: string;
  listen?: string;
  config?: string;
  logLevel?: string;
  logFormat?: string;
  apiTokenFile?: string;
  observe?: boolean;
  force?: boolean;
}

/** The flags that choose the daemon's configuration (`berth run`, `berth config show`). */
export function withDaemonConfigOptions(command: Command): Command {
  return command
    .option(
      '--data-dir <dir>',
      'where berth keeps its state, API socket and objects (default: $BERTH_DATA_DIR, else /var/lib/berth as root, else $XDG_STATE_HOME/berth, else ~/.local/state/berth)',
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
      `also serve the API on TCP (default: the unix socket only: ${SYSTEM_PATHS.apiSocketPath} as root, else <data-dir>/berth.sock)`,
    )
    .option(
      '--api-token-file <file>',
      'bearer token TCP clients must send; created on first start, 0600 (default: <data-dir>/api-token)',
    )
    .option(
      '--config <file>',
      `YAML or JSON config file; flags override it (default: ${SYSTEM_PATHS.configFile} as root when it exists, else none)`,
    )
    .option('--log-level <level>', `${LOG_LEVELS.join('|')} (default: info)`)
    .option(
      '--log-format <format>',
      `${LOG_FORMATS.join('|')}: JSON lines, or one readable line per event (default: auto, text on a terminal)`,
    );
}

/**
 * `berth run`'s command. `action` is what it calls with the parsed flags
 * (runDaemon; a test passes its own to compare commander's flags with the
 * fast path's, run-args.ts).
 */
export function runCommand(program: Command, action: (flags: RunFlags) => Promise<void> = runDaemon): void {
  withDaemonConfigOptions(
    program
      .command('run')
      .description('start the daemon: watch the plugins directory, keep the registry, serve the API'),
  ).action((flags: RunFlags) => action(flags));
}

/**
 * Starts the daemon and resolves once it serves; it keeps running until a
 * signal stops it. Reached through commander (runCommand) or, when the
 * arguments need no parser, straight from main.cts (run-entry.ts).
 */
export async function runDaemon(flags: RunFlags): Promise<void> {
  // The daemon (gRPC, fastify, SQLite) is loaded only by the command that runs it.
  const loaded = await loadDaemonModule();
  const daemonModule = loaded.module;
  const { createDaemon, createDaemonLogger, handleShutdownSignals, loadDaemonConfig } = daemonModule;
  let config = loadDaemonConfig(flags);
  // stdout and stderr may be a full disk or a closed pipe: lines are dropped and
  // counted there, never allowed to take the daemon down (log-sink.ts).
  const stdout = new daemonModule.LogSink(1);
  const stderr = new daemonModule.LogSink(2);
  const ignoreStreamError = () => {};
  process.stdout.on('error', ignoreStreamError);
  process.stderr.on('error', ignoreStreamError);
  const logger = createDaemonLogger({
    level: config.logLevel,
    format: config.logFormat,
    destination: stderr,
  });
  logger.debug(loaded.describe(), 'daemon module loaded');
  const daemon = createDaemon(config, {
    logger,
    clock: systemClock,
    logLinesDropped: () => ({ stdout: stdout.dropped, stderr: stderr.dropped }),
  });
  const notifier = await daemonModule.createSystemdNotifier({ logger });
  const service = daemonModule.startServiceStatus({
    notifier,
    clock: systemClock,
    state: () => daemon.serviceState(),
  });
  let signalled = false;
  handleShutdownSignals({
    stop: () => {
      signalled = true;
      service.stopping();
      return daemon.stop();
    },
    timeoutMs: config.shutdownTimeoutMs,
    exit: (code) => {
      service.close();
      process.exit(code);
    },
    clock: systemClock,
    logger,
  });
  daemonModule.handleReloadSignal({
    reload: () => {
      config = daemonModule.reloadConfig({
        load: () => loadDaemonConfig(flags),
        running: config,
        target: {
          setLogLevel: (level) => logger.setLevel(level),
          setHandlerVersions: (type, versions) => daemon.setHandlerVersions(type, versions),
          setObjectLimits: (limits) => daemon.setObjectLimits(limits),
        },
        logger,
      });
    },
  });
  try {
    await daemon.start();
  } catch (err) {
    service.close();
    // A signal during start-up: the signal handler finishes the stop and exits.
    if (signalled) return;
    throw err;
  }
  service.update();
  const { socketPath, tcp } = daemon.apiAddress;
  const scheme = config.tls ? 'https' : 'http';
  const api = tcp
    ? `${socketPath} and ${scheme}://${formatHostPort(tcp)} (token in ${config.api.tokenFile})`
    : socketPath;
  const role = config.mode === 'observe' ? 'observing (read-only)' : 'watching';
  stdout.write(`berth: ${role} ${config.pluginsDir} for plugins; API on ${api}\n`);
  // Once ready, so the cache holds what this start compiled; later, so the first requests go first.
  setImmediate(() => {
    const saved = loaded.saveCodeCache();
    if (saved !== undefined) logger.debug(saved, 'daemon code cache');
    // Last: V8 stamps code caches with its flags, so a flag changed any earlier would make this
    // cache, and node's own cache of its built-in modules, useless to every later start.
    logger.debug({ interruptBudget: applyDaemonJitTuning() }, 'daemon JIT tuning');
  });
}
