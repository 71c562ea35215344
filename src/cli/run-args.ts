import type { RunFlags } from './commands/run.js';

type SwitchKey = 'observe' | 'force';

/** `berth run`'s options that take a value, by flag, with the key commander gives them (commands/run.ts). */
const VALUE_FLAGS: ReadonlyMap<string, Exclude<keyof RunFlags, SwitchKey>> = new Map([
  ['--data-dir', 'dataDir'],
  ['--plugins-dir', 'pluginsDir'],
  ['--listen', 'listen'],
  ['--config', 'config'],
  ['--log-level', 'logLevel'],
  ['--log-format', 'logFormat'],
  ['--api-token-file', 'apiTokenFile'],
]);
const SWITCHES: ReadonlyMap<string, SwitchKey> = new Map([
  ['--observe', 'observe'],
  ['--force', 'force'],
]);

/**
 * The flags of a `berth run` whose arguments are plain enough to need no
 * command-line parser: `run` then known long options, each at most once, as
 * `--flag value` (a value not starting with "-") or `--flag=value`, and the
 * two switches. These give exactly the flags commander would (a test
 * compares them). Anything else (help, a mistake, global options before
 * `run`, a value that looks like an option) is undefined: main.cts then
 * builds the whole program, which parses it and says what is wrong. This
 * spares `berth run` loading commander and every command's module, about a
 * tenth of its time to ready.
 */
export function parseRunArgs(args: readonly string[]): RunFlags | undefined {
  if (args[0] !== 'run') return undefined;
  const flags: RunFlags = {};
  for (let i = 1; i < args.length; i += 1) {
    const arg = args[i] as string;
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg : arg.slice(0, eq);
    const valueKey = VALUE_FLAGS.get(name);
    const switchKey = SWITCHES.get(arg);
    if (switchKey !== undefined) {
      if (flags[switchKey] !== undefined) return undefined;
      flags[switchKey] = true;
    } else if (valueKey !== undefined) {
      if (flags[valueKey] !== undefined) return undefined;
      let value: string | undefined;
      if (eq >= 0) value = arg.slice(eq + 1);
      else {
        value = args[i + 1];
        i += 1;
        if (value === undefined || value.startsWith('-')) return undefined;
      }
      flags[valueKey] = value;
    } else {
      return undefined;
    }
  }
  return flags;
}
