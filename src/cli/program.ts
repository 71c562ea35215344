import { Argument, Command, CommanderError } from 'commander';
import { berthVersion } from '../daemon/contract.js';
import { EXIT_OK, EXIT_USAGE, errorLine, exitCodeFor } from './cli-error.js';
import { clusterCommand } from './commands/cluster.js';
import { configCommand } from './commands/config.js';
import { csiCommand } from './commands/csi.js';
import { dashboardCommand } from './commands/dashboard.js';
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
import { COMPLETION_SHELLS, completionScript } from './completion.js';

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

/**
 * Commander's message ("error: unknown option '--x'", maybe followed by
 * "(Did you mean --y?)") as berth's one line, with what to do.
 */
function usageLine(message: string, hint: string): string {
  const [first = '', ...rest] = message
    .trim()
    .replace(/^error: /, '')
    .split('\n');
  const what = first.replace(/\.$/, '');
  const suggestion = /\(Did you mean ([^)]+)\?\)/.exec(rest.join(' '))?.[1];
  return `berth: ${what}${suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`}; see \`${hint} --help\``;
}

/** Options that every client command takes, and that may come before the command name (kubectl's habit). */
const GLOBAL_WITH_VALUE = new Set([
  '--api',
  '--data-dir',
  '--token-file',
  '--tls-ca',
  '--tls-cert',
  '--tls-key',
  '-o',
  '--output',
]);
const GLOBAL_FLAGS = new Set(['--json']);

/**
 * `berth --api X status` → `berth status --api X`: global options given
 * before the command name are moved after it (before a `--`, if any), where
 * the command's own parser takes them. Anything else is left for commander.
 */
export function moveGlobalOptions(args: readonly string[]): string[] {
  const moved: string[] = [];
  let i = 0;
  while (i < args.length) {
    const arg = args[i] as string;
    if (!arg.startsWith('-') || arg === '--') break;
    const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    if (GLOBAL_FLAGS.has(arg)) {
      moved.push(arg);
      i += 1;
    } else if (GLOBAL_WITH_VALUE.has(name)) {
      const takesNext = !arg.includes('=') && i + 1 < args.length;
      moved.push(...args.slice(i, i + (takesNext ? 2 : 1)));
      i += takesNext ? 2 : 1;
    } else if (/^-o./.test(arg)) {
      moved.push(arg); // -ojson
      i += 1;
    } else {
      return [...args]; // --help, --version, a mistake: commander says what it is
    }
  }
  if (moved.length === 0 || i >= args.length) return [...args];
  const rest = args.slice(i);
  const dashes = rest.indexOf('--');
  return dashes < 0 ? [...rest, ...moved] : [...rest.slice(0, dashes), ...moved, ...rest.slice(dashes)];
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
    .configureOutput({ outputError: () => {}, writeOut: out })
    .addHelpText(
      'after',
      '\nThe options --api, --data-dir, --token-file and -o may also come before the command:\n  berth --api 10.0.0.5:7878 -o yaml plugins',
    );
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
  dashboardCommand(program);
  examplePluginCommand(program);
  program
    .command('completion')
    .description('print a shell completion script (bash: source <(berth completion bash))')
    .addArgument(new Argument('<shell>', 'the shell').choices(COMPLETION_SHELLS))
    .action((shell: string) => {
      out(completionScript(program, shell));
    });
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
    await program.parseAsync(moveGlobalOptions(args), { from: 'user' });
    return EXIT_OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end with exitCode 0 after printing.
      if (err.exitCode === 0) return EXIT_OK;
      // A command group called without its subcommand: commander has printed its help.
      if (err.code === 'commander.help') return EXIT_USAGE;
      io.error(usageLine(err.message, commandPath(program, moveGlobalOptions(args))));
      return EXIT_USAGE;
    }
    io.error(errorLine(err));
    return exitCodeFor(err);
  }
}
