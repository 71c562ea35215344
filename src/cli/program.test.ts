import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withCliHints } from './cli-hints.js';
import { moveGlobalOptions, runCli } from './program.js';

async function run(args: string[]) {
  const errors: string[] = [];
  let out = '';
  const code = await runCli(args, { error: (line) => errors.push(line), out: (text) => (out += text) });
  return { code, errors, out };
}

describe('berth command line', () => {
  it('reports usage errors as one line with exit code 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['nope'], /^berth: unknown command 'nope'; see `berth --help`$/],
      [['plugins', '--bogus'], /^berth: unknown option '--bogus'; see `berth plugins --help`$/],
      [
        ['example-plugin'],
        /^berth: required option '--name <name>' not specified; see `berth example-plugin --help`$/,
      ],
      [
        ['objects', 'get', 'pods', 'a/b'],
        /invalid for argument 'resource'.*secrets, configmaps; see `berth objects get --help`$/,
      ],
      [['pods', 'delete', 'no-slash'], /^berth: the pod must be NAMESPACE\/NAME, got "no-slash"$/],
      // --data-dir: as root, no flag would look for /etc/berth/config.yaml; tests never read it.
      [
        ['run', '--data-dir', '/nonexistent/d', '--listen', 'nowhere'],
        /^berth: --listen: expected HOST:PORT/,
      ],
      [
        ['run', '--data-dir', '/nonexistent/d', '--log-level', 'loud'],
        /^berth: --log-level: expected one of trace\|debug/,
      ],
      [
        ['config', 'show', '--data-dir', '/nonexistent/d', '-o', 'xml'],
        /^berth: --output: expected one of text\|json\|yaml, got "xml"$/,
      ],
      [
        ['pods', 'apply', '-f', '/nonexistent/pod.yaml'],
        /^berth: cannot read \/nonexistent\/pod\.yaml \(no such file\)/,
      ],
      [['example-plugin', '--name', 'a/b'], /^berth: --name "a\/b": use letters/],
    ];
    for (const [args, expected] of cases) {
      const { code, errors } = await run(args);
      assert.equal(code, 2, args.join(' '));
      assert.equal(errors.length, 1, args.join(' '));
      assert.match(errors[0] ?? '', expected);
    }
  });

  it('lists every flag with its default in --help', async () => {
    // Help text wraps at the terminal width; compare with whitespace collapsed.
    const flat = (text: string) => text.replace(/\s+/g, ' ');
    const help = await run(['example-plugin', '--help']);
    assert.equal(help.code, 0);
    assert.ok(
      flat(help.out).includes(
        '--type <type> plugin type reported to the daemon (default: "example.com/berth-example")',
      ),
    );
    assert.ok(flat(help.out).includes('(default: "v1beta1,v1beta2")'));
    const runHelp = await run(['run', '--help']);
    for (const flag of ['--data-dir', '--plugins-dir', '--listen', '--config', '--log-level']) {
      assert.ok(runHelp.out.includes(flag), flag);
    }
    assert.ok(
      flat(runHelp.out).includes(
        '(default: $BERTH_DATA_DIR, else /var/lib/berth as root, else $XDG_STATE_HOME/berth, else ~/.local/state/berth)',
      ),
    );
    assert.ok(flat(runHelp.out).includes('(default: info)'));
    const version = await run(['--version']);
    assert.equal(version.code, 0);
    assert.match(version.out, /^\d+\.\d+\.\d+/);
  });

  it('says how to start the daemon when it cannot be reached (exit code 1)', async () => {
    const { code, errors } = await run(['sockets', '--api', '/nonexistent/berth.sock']);
    assert.equal(code, 1);
    assert.deepEqual(errors, [
      'berth: cannot reach the daemon at /nonexistent/berth.sock: no such socket (is `berth run` running?)',
    ]);
  });

  it('moves global options given before the command after it', () => {
    assert.deepEqual(moveGlobalOptions(['--api', 'h:1', '-o', 'yaml', 'cluster', 'nodes']), [
      'cluster',
      'nodes',
      '--api',
      'h:1',
      '-o',
      'yaml',
    ]);
    assert.deepEqual(moveGlobalOptions(['--data-dir=/d', '--json', 'plugins', '--type', 't']), [
      'plugins',
      '--type',
      't',
      '--data-dir=/d',
      '--json',
    ]);
    assert.deepEqual(moveGlobalOptions(['-ojson', 'pods', 'apply', '--', '-f']), [
      'pods',
      'apply',
      '-ojson',
      '--',
      '-f',
    ]);
    // Nothing to move, or something that is not a global option: left for commander to judge.
    assert.deepEqual(moveGlobalOptions(['plugins', '--api', 'x']), ['plugins', '--api', 'x']);
    assert.deepEqual(moveGlobalOptions(['--bogus', 'plugins']), ['--bogus', 'plugins']);
    assert.deepEqual(moveGlobalOptions(['--api', 'x']), ['--api', 'x']);
  });

  it("names the berth command in the daemon's list hints", () => {
    assert.equal(
      withCliHints(
        "plugin p for type t not found; list registered plugins with GET /v1/plugins (encode a '/' in a name as %2F)",
      ),
      'plugin p for type t not found; list them with `berth plugins`',
    );
    assert.equal(
      withCliHints('device resource r is not known; list resources with GET /v1/devices'),
      'device resource r is not known; list them with `berth devices`',
    );
    assert.equal(withCliHints('see GET /v1/unknown'), 'see GET /v1/unknown');
  });
});
