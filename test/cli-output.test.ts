/**
 * The CLI as an operator used to kubectl meets it, against a real daemon:
 * -o json|yaml|wide|name, global options before the command, suggestions for
 * mistakes, hints that name `berth` commands, completion scripts bash can
 * parse, and --watch re-rendering when a plugin registers until Ctrl-C.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { silentLogger } from '../src/common/index.js';
import { createDaemon, type Daemon, resolveDaemonConfig } from '../src/daemon/index.js';
import { createExamplePlugin } from '../src/registration/index.js';
import {
  BERTH_CLI,
  runModule,
  spawnModule,
  stopChild,
  trackChild,
  waitForLine,
} from '../src/testing/harness/index.js';
import { createTempDir, type TempDir, waitFor } from '../src/testing/index.js';

const MAIN = BERTH_CLI;
const EXAMPLE = 'example.com/berth-example';

async function startDaemon(dir: TempDir): Promise<Daemon> {
  const config = resolveDaemonConfig({}, { dataDir: dir.join('data') }, { env: {} });
  const daemon = createDaemon(config, { logger: silentLogger });
  await daemon.start();
  return daemon;
}

async function addPlugin(t: { after: (fn: () => unknown) => void }, daemon: Daemon, name: string) {
  const plugin = createExamplePlugin({
    socketPath: join(daemon.config.pluginsDir, `${name}.sock`),
    name,
    type: EXAMPLE,
    versions: ['v1beta1'],
  });
  t.after(() => plugin.stop());
  await plugin.start();
  await daemon.registry.waitForPlugin(EXAMPLE, name, {});
}

describe('CLI output and habits', () => {
  it('prints -o json, yaml, name and wide; takes global options before the command; refuses bad ones with exit 2', async (t) => {
    await using dir = createTempDir('berth-out-');
    const daemon = await startDaemon(dir);
    t.after(() => daemon.stop());
    await addPlugin(t, daemon, 'alpha');
    const env = { PATH: process.env.PATH ?? '', HOME: dir.path };
    const data = dir.join('data');
    const cli = (args: string[]) => runModule(MAIN, args, { env });

    const json = await cli(['plugins', '--data-dir', data, '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(JSON.parse(json.stdout).plugins[0].name, 'alpha');
    const alias = await cli(['--data-dir', data, 'plugins', '--json']);
    assert.deepEqual(JSON.parse(alias.stdout).plugins, JSON.parse(json.stdout).plugins);

    const yaml = await cli(['--data-dir', data, '-o', 'yaml', 'plugins']);
    assert.equal(yaml.code, 0, yaml.stderr);
    assert.equal(parseYaml(yaml.stdout).plugins[0].name, 'alpha');

    const names = await cli(['sockets', '-o', 'name', '--data-dir', data]);
    assert.equal(names.stdout, `${join(daemon.config.pluginsDir, 'alpha.sock')}\n`);
    assert.equal((await cli(['--data-dir', data, 'plugins', '-o', 'name'])).stdout, `${EXAMPLE}/alpha\n`);

    // Piped (not a terminal): the table is printed in full, as -o wide does.
    const table = await cli(['sockets', '--data-dir', data]);
    const wide = await cli(['sockets', '--data-dir', data, '-o', 'wide']);
    assert.match(table.stdout, /^SOCKET\s+STATE\s+PLUGIN/);
    assert.equal(table.stdout, wide.stdout);
    assert.ok(table.stdout.includes(join(daemon.config.pluginsDir, 'alpha.sock')));

    const usage: Array<[string[], RegExp]> = [
      [
        ['plugins', '-o', 'xml', '--data-dir', data],
        /^berth: option '-o, --output <format>' argument 'xml' is invalid\. Allowed choices are json, yaml, wide, name; see `berth plugins --help`$/,
      ],
      [
        ['--data-dir', data, 'status', '--watch'],
        /^berth: `berth status` has nothing to watch; --watch works with plugins, sockets/,
      ],
      [['pods', 'list', '-w', '--data-dir', data], /^berth: `berth pods list` has nothing to watch/],
      [
        ['status', '-o', 'name', '--data-dir', data],
        /^berth: `berth status` has no names to print; use -o json or -o yaml$/,
      ],
      [
        ['plugins', '--jsn', '--data-dir', data],
        /^berth: unknown option '--jsn' \(did you mean --json\?\); see `berth plugins --help`$/,
      ],
      [
        ['socket', '--data-dir', data],
        /^berth: unknown command 'socket' \(did you mean sockets\?\); see `berth --help`$/,
      ],
      [
        ['plugins', '--json', '-o', 'yaml', '--data-dir', data],
        /^berth: --json and -o yaml ask for different output/,
      ],
    ];
    for (const [args, expected] of usage) {
      const run = await cli(args);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.equal(run.stdout, '');
      const lines = run.stderr.trim().split('\n');
      assert.equal(lines.length, 1, run.stderr);
      assert.match(lines[0] ?? '', expected);
    }

    // The daemon's hint names the berth command, not the HTTP route.
    const missing = await cli(['pods', 'delete', 'ns/nope', '--data-dir', data]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /pod ns\/nope is not registered; list them with `berth pods list`/);
    assert.doesNotMatch(missing.stderr, /GET \/v1/);
  });

  it('prints completion scripts; bash parses its script and completes subcommands and -o values', async () => {
    await using dir = createTempDir('berth-out-');
    const env = { PATH: process.env.PATH ?? '', HOME: dir.path };
    const scripts: Record<string, string> = {};
    for (const shell of ['bash', 'zsh', 'fish']) {
      const run = await runModule(MAIN, ['completion', shell], { env });
      assert.equal(run.code, 0, run.stderr);
      scripts[shell] = run.stdout;
    }
    writeFileSync(dir.join('berth.bash'), scripts.bash ?? '');
    execFileSync('bash', ['-n', dir.join('berth.bash')]);
    const complete = (words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source ${dir.join('berth.bash')}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _berth; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { encoding: 'utf8', env },
      )
        .trim()
        .split('\n');
    const top = complete(['berth', '']);
    for (const command of ['plugins', 'sockets', 'events', 'status', 'devices', 'cluster', 'completion']) {
      assert.ok(top.includes(command), `${command} in ${top.join(' ')}`);
    }
    assert.deepEqual(complete(['berth', 'cluster', 'n']), ['nodes']);
    assert.deepEqual(complete(['berth', '--api', 'x', 'devices', 'al']), ['allocate']);
    assert.deepEqual(complete(['berth', 'plugins', '-o', '']).sort(), ['json', 'name', 'wide', 'yaml']);
    assert.ok(complete(['berth', 'sockets', '--w']).includes('--watch'));
    assert.match(scripts.zsh ?? '', /^#compdef berth\n/);
    assert.match(scripts.fish ?? '', /complete -c berth -n '__fish_use_subcommand' -a 'plugins'/);
    const bad = await runModule(MAIN, ['completion', 'tcsh'], { env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^berth: command-argument value 'tcsh' is invalid for argument 'shell'/);
  });

  it('--watch renders again when a plugin registers, and ends with exit 0 on Ctrl-C', async (t) => {
    await using dir = createTempDir('berth-out-');
    const daemon = await startDaemon(dir);
    t.after(() => daemon.stop());
    const children = new Set<ChildProcess>();
    t.after(async () => {
      for (const child of children) await stopChild(child);
    });
    const env = { PATH: process.env.PATH ?? '', HOME: dir.path };
    const plugins = trackChild(
      spawnModule(MAIN, ['--data-dir', dir.join('data'), 'plugins', '--watch'], { env }),
      children,
    );
    const sockets = trackChild(
      spawnModule(MAIN, ['sockets', '-w', '-o', 'name', '--data-dir', dir.join('data')], { env }),
      children,
    );
    await waitForLine(plugins, 'the first render', (line) => line === 'no plugins registered');
    // The sockets watcher's first render (no sockets: an empty -o name list) has no line; wait
    // until the daemon streams to both before the plugin registers.
    await waitFor('two event clients', async () => {
      const run = await runModule(MAIN, ['status', '-o', 'json', '--data-dir', dir.join('data')], { env });
      return JSON.parse(run.stdout).counts.eventClients === 2;
    });
    await addPlugin(t, daemon, 'watched');
    await waitForLine(plugins, 'a second render with the new plugin', (line) =>
      /^example\.com\/berth-example\s+watched\s+v1beta1/.test(line),
    );
    await waitForLine(sockets, 'the new socket', (line) => line.endsWith('watched.sock'));
    assert.ok(plugins.stdout.includes('no plugins registered'), 'the first render came before');
    assert.ok(
      plugins.stdout.filter((line) => line.startsWith('TYPE')).length >= 1,
      plugins.stdout.join('\n'),
    );
    plugins.child.kill('SIGINT');
    sockets.child.kill('SIGINT');
    assert.equal(await plugins.exited, 0);
    assert.equal(await sockets.exited, 0);
    assert.deepEqual(plugins.stderr, []);
  });
});
