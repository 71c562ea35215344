import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCli } from './program.js';

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
});
