import { EXIT_OK, errorLine, exitCodeFor } from './cli-error.js';
import { type RunFlags, runDaemon } from './commands/run.js';

export { parseRunArgs } from './run-args.js';

/**
 * `berth run` without the command-line program: main.cts comes here when
 * run-args.ts could read the flags, so the start loads neither commander
 * nor the other commands' modules. Returns the exit code as runCli
 * (program.ts) would for the same flags: a failure is one line on stderr.
 */
export async function runDaemonCli(
  flags: RunFlags,
  io: { error(line: string): void } = { error: (line) => console.error(line) },
): Promise<number> {
  try {
    await runDaemon(flags);
    return EXIT_OK;
  } catch (err) {
    io.error(errorLine(err));
    return exitCodeFor(err);
  }
}
