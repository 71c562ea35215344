import type { Command } from 'commander';
import { usageError } from '../cli-error.js';
import { loadDaemonModule } from '../daemon-module.js';
import { formatTable } from '../format-table.js';
import { type RunFlags, withDaemonConfigOptions } from './run.js';

const OUTPUTS = ['text', 'json', 'yaml'] as const;

interface ShowFlags extends RunFlags {
  output: string;
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

export function configCommand(program: Command): void {
  const config = program.command('config').description("berth run's configuration");
  withDaemonConfigOptions(
    config
      .command('show')
      .description(
        'print the configuration `berth run` would use with these flags, and where each value came from (default, file, env, flag)',
      ),
  )
    .option('-o, --output <format>', `${OUTPUTS.join('|')}`, 'text')
    .action(async (flags: ShowFlags) => {
      if (!(OUTPUTS as readonly string[]).includes(flags.output)) {
        throw usageError(
          `--output: expected one of ${OUTPUTS.join('|')}, got ${JSON.stringify(flags.output)}`,
        );
      }
      const { output, ...configFlags } = flags;
      // Config loading (zod, yaml) is loaded only by the commands that read a config.
      const { explainDaemonConfig } = (await loadDaemonModule()).module;
      const { config: resolved, settings } = explainDaemonConfig(configFlags);
      const document = {
        file: resolved.configFile ?? null,
        paths: resolved.scope,
        settings: settings.map(({ key, value, source }) => ({ key, value, source })),
      };
      if (output === 'json') {
        process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
        return;
      }
      if (output === 'yaml') {
        const { stringify } = await import('yaml');
        process.stdout.write(stringify(document));
        return;
      }
      const head = `config file: ${resolved.configFile ?? 'none'}; paths: ${resolved.scope === 'system' ? 'system (root)' : 'user'}`;
      const rows = settings.map(({ key, value, source }) => [key, formatValue(value), source]);
      process.stdout.write(`${head}\n${formatTable(['KEY', 'VALUE', 'SOURCE'], rows)}\n`);
    });
}
