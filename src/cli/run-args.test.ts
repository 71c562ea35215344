import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command, CommanderError } from 'commander';
import { type RunFlags, runCommand } from './commands/run.js';
import { parseRunArgs } from './run-args.js';

/** The flags commander hands `berth run`'s action for args, or its error code. */
async function commanderFlags(args: string[]): Promise<RunFlags | string> {
  let flags: RunFlags | undefined;
  const program = new Command('berth')
    .exitOverride()
    .configureOutput({ outputError: () => {}, writeOut: () => {} });
  runCommand(program, async (parsed) => {
    flags = parsed;
  });
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.code;
    throw err;
  }
  assert.ok(flags !== undefined, `${args.join(' ')}: the action ran`);
  return flags;
}

describe('berth run fast path (run-args)', () => {
  it('reads plain run arguments exactly as commander does', async () => {
    const cases: string[][] = [
      ['run'],
      ['run', '--data-dir', '/d'],
      ['run', '--data-dir=/d', '--plugins-dir', '/p', '--observe'],
      ['run', '--listen', '127.0.0.1:0', '--config', 'c.yaml', '--force'],
      ['run', '--log-level', 'warn', '--log-format=json', '--api-token-file', '/t'],
      ['run', '--data-dir=', '--listen=a=b'],
      ['run', '--data-dir', ''],
      ['run', '--log-level', 'loud'], // commander leaves the value's check to the daemon's config too
    ];
    for (const args of cases) {
      const fast = parseRunArgs(args);
      assert.ok(fast !== undefined, `${args.join(' ')} takes the fast path`);
      assert.deepEqual(fast, await commanderFlags(args), args.join(' '));
    }
  });

  it('leaves everything else to commander', async () => {
    const cases: Array<[string[], string | undefined]> = [
      [[], undefined],
      [['plugins'], undefined],
      [['--data-dir', '/d', 'run'], undefined],
      [['run', '--help'], 'commander.helpDisplayed'],
      [['run', '-h'], 'commander.helpDisplayed'],
      [['run', '--bogus'], 'commander.unknownOption'],
      [['run', '--obs'], 'commander.unknownOption'],
      [['run', '--observe=1'], 'commander.unknownOption'],
      [['run', 'extra'], 'commander.excessArguments'],
      [['run', '--', 'x'], 'commander.excessArguments'],
      [['run', '--data-dir'], 'commander.optionMissingArgument'],
      [['run', 'constructor'], 'commander.excessArguments'],
      [['run', '--toString'], 'commander.unknownOption'],
      // Valid for commander, but not plain: it parses them.
      [['run', '--data-dir', '-d'], undefined],
      [['run', '--data-dir', 'a', '--data-dir', 'b'], undefined],
      [['run', '--observe', '--observe'], undefined],
    ];
    for (const [args, commanderSays] of cases) {
      assert.equal(parseRunArgs(args), undefined, args.join(' '));
      if (commanderSays !== undefined)
        assert.equal(await commanderFlags(args), commanderSays, args.join(' '));
    }
  });
});
