import { Command, CommanderError } from 'commander';
import { berthVersion } from '../daemon/contract.js';
import { EXIT_OK, EXIT_USAGE, errorLine, exitCodeFor } from './cli-error.js';
import { clusterCommand } from './commands/cluster.js';
import { configCommand } from './commands/config.js';
import { csiCommand } from './commands/csi.js';
import { devicesCommand } from './commands/devices.js';
import { draCommand } from './commands/dra.js';
import { eventsCommand } from './commands/events.js';
import { examplePluginCommand } from './commands/example-plugin.js';
import { objectsCommand } from './commands/objects.js';
import { pluginsCommand } from './commands/plugins.js';
import { podsCommand } from './commands/pods.js';
import { runCommand } from './commands/run.js';
import { socketsCommand } from './commands/sockets.js';
import { statusCommand } from './commands/status.js';

export interface CliIo {
  /** Where error lines go. */
  error(line: string): void;
  /** Where help and version text go (default stdout). */
  out?(text: string): void;
}

/** The deepest command named in argv, for a "see berth X --help" hint. */
function commandPath(program: Command, args: readonly string[]): string {
  const names = ['berth'];
  let current = program;
  for (const arg of args) {
    if (arg.startsWith('-')) continue;
    const next = current.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!next) break;
    names.push(next.name());
    current = next;
  }
  return names.join(' ');
}

/** Commander's message ("error: unknown option '--x'") as berth's one line, with what to do. */
function usageLine(message: string, hint: string): string {
  const what = (
    message
      .trim()
      .replace(/^error: /, '')
      .split('\n')[0] ?? ''
  ).replace(/\.$/, '');
  return `berth: ${what}; see \`${hint} --help\``;
}

export function buildProgram(out: (text: string) => void = (text) => process.stdout.write(text)): Command {
  const program = new Command('berth')
    .description(
      'node-local plugin manager: kubelet-style plugin registration, a durable plugin registry, and an object cache',
    )
    .version(berthVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .showSuggestionAfterError(true)
    .exitOverride()
    // Errors are reported by runCli as one line; help goes to `out` (stderr when shown for a mistake).
    .configureOutput({ outputError: () => {}, writeOut: out });
  runCommand(program);
  configCommand(program);
  pluginsCommand(program);
  socketsCommand(program);
  eventsCommand(program);
  statusCommand(program);
  devicesCommand(program);
  podsCommand(program);
  objectsCommand(program);
  csiCommand(program);
  draCommand(program);
  clusterCommand(program);
  examplePluginCommand(program);
  return program;
}

/**
 * Runs the berth command line and returns the exit code: 0 success, 1 runtime
 * failure, 2 usage error. Every failure is reported as one line on stderr.
 */
export async function runCli(
  args: readonly string[],
  io: CliIo = { error: (line) => console.error(line) },
): Promise<number> {
  const program = buildProgram(io.out);
  try {
    await program.parseAsync([...args], { from: 'user' });
    return EXIT_OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end with exitCode 0 after printing.
      if (err.exitCode === 0) return EXIT_OK;
      // A command group called without its subcommand: commander has printed its help.
      if (err.code === 'commander.help') return EXIT_USAGE;
      io.error(usageLine(err.message, commandPath(program, args)));
      return EXIT_USAGE;
    }
    io.error(errorLine(err));
    return exitCodeFor(err);
  }
}
