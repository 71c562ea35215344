/**
 * The system paths for real, as root, without touching the machine's: each
 * case runs in a private mount namespace (`unshare -m`) with tmpfs over
 * /var/lib and /run, and /etc/berth on a tmpfs too (when the machine has no
 * /etc/berth, /etc gets a tmpfs-backed overlay first so the mount point is
 * created there, not in the real /etc). The main case also runs berth the
 * way the systemd unit confines it, as far as a shell can: the root file
 * system read-only, no new privileges, only CAP_DAC_OVERRIDE and CAP_FOWNER.
 * Skipped, with the reason, when not root or when mount namespaces or
 * setpriv are not available.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  BERTH_CLI,
  type NotifyReceiver,
  notifyReceiverAvailable,
  startNotifyReceiver,
} from '../src/testing/harness/index.js';
import { createTempDir } from '../src/testing/index.js';

const MAIN = fileURLToPath(BERTH_CLI);
const NODE_ARGS = MAIN.endsWith('.ts') ? '--import tsx' : '';

/** Why this machine cannot run the namespace cases, or undefined. */
function unavailable(): string | undefined {
  if (process.geteuid?.() !== 0)
    return 'needs root (CI runs as root): mounts tmpfs over /var/lib, /run and /etc/berth';
  try {
    execFileSync('unshare', ['-m', '--propagation', 'private', 'true'], { stdio: 'ignore' });
  } catch {
    return 'unshare -m failed: no mount namespaces here';
  }
  try {
    execFileSync('sh', ['-c', 'command -v setpriv'], { stdio: 'ignore' });
  } catch {
    return "needs setpriv (util-linux) to run berth with the unit's capabilities";
  }
  return undefined;
}

/** Mounts the private system paths, then runs `body`; everything happens in a new mount namespace. */
const PRELUDE = `
set -eu
mount -t tmpfs tmpfs /var/lib
mount -t tmpfs tmpfs /run
if [ ! -d /etc/berth ]; then
  # Create the mount point in a tmpfs-backed overlay of /etc, never in the real /etc.
  mkdir -p "$WORK/etc-upper" "$WORK/etc-work"
  mount -t tmpfs tmpfs "$WORK/etc-upper"
  mkdir -p "$WORK/etc-upper/upper" "$WORK/etc-upper/work"
  mount -t overlay overlay -o "lowerdir=/etc,upperdir=$WORK/etc-upper/upper,workdir=$WORK/etc-upper/work" /etc
  mkdir /etc/berth
fi
mount -t tmpfs tmpfs /etc/berth
unset BERTH_DATA_DIR XDG_STATE_HOME
export HOME="$WORK/home"
berth() { "$NODE" $NODE_ARGS "$MAIN" "$@"; }
# For a background daemon: exec, so that $! is berth itself (signals reach it, nothing outlives the script).
berth_exec() { exec "$NODE" $NODE_ARGS "$MAIN" "$@"; }
`;

interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runInNamespace(work: string, body: string, env: Record<string, string> = {}): Promise<ScriptRun> {
  return new Promise((resolve) => {
    const child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', PRELUDE + body], {
      env: { ...process.env, WORK: work, NODE: process.execPath, NODE_ARGS, MAIN, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('root defaults in a private mount namespace', () => {
  const reason = unavailable();

  it('state in /var/lib/berth, API on /run/berth/berth.sock, /etc/berth/config.yaml read, the CLI finds it, READY=1 and STOPPING=1, confined as the unit confines it', {
    timeout: 180_000,
  }, async (t) => {
    if (reason !== undefined) {
      t.skip(reason);
      return;
    }
    if (!notifyReceiverAvailable()) {
      t.skip('needs /usr/bin/python3 for the NOTIFY_SOCKET receiver');
      return;
    }
    const dir = createTempDir();
    t.after(() => dir.remove());
    let receiver: NotifyReceiver | undefined;
    t.after(() => receiver?.stop());
    receiver = await startNotifyReceiver(dir.join('notify.sock'));
    // The daemon runs in the background of the script; the script waits for its socket
    // (polling: the test cannot see into the namespace), asks the CLI with no flags, and stops it.
    const run = await runInNamespace(
      dir.path,
      `
printf 'objects: {strategy: Get}\\nlogFormat: json\\n' > /etc/berth/config.yaml
# As the unit runs it, as far as a shell can: everything but berth's paths read-only
# (ProtectSystem=strict), no new privileges, and only the unit's capabilities.
mount --bind "$WORK" "$WORK"
mount -o remount,bind,ro /
if touch /berth-probe 2> /dev/null; then echo "/ is still writable"; exit 6; fi
NOTIFY_SOCKET="$NOTIFY" setpriv --no-new-privs --bounding-set -all,+dac_override,+fowner \\
  "$NODE" $NODE_ARGS "$MAIN" run > "$WORK/daemon.out" 2> "$WORK/daemon.err" &
pid=$!
trap 'kill -9 $pid 2> /dev/null || true' EXIT
i=0
until [ -S /run/berth/berth.sock ] && berth status --json > "$WORK/status.json" 2> "$WORK/status.err"; do
  i=$((i + 1)); [ "$i" -lt 600 ] || { echo "no socket"; kill -9 $pid; exit 3; }
  kill -0 $pid 2> /dev/null || { echo "daemon exited"; exit 4; }
  sleep 0.1
done
stat -c '%a %n' /var/lib/berth /var/lib/berth/state.db /run/berth > "$WORK/modes.txt"
grep -E '^(CapEff|NoNewPrivs):' /proc/$pid/status > "$WORK/privileges.txt"
kill -TERM $pid
wait $pid || { echo "daemon exit $?"; exit 5; }
`,
      { NOTIFY: receiver.path },
    );
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}\n${readIfAny(dir.join('daemon.err'))}`);
    const status = JSON.parse(readFileSync(dir.join('status.json'), 'utf8')) as {
      dataDir: string;
      pluginsDir: string;
      api: { socket: string };
      objects: { strategy: string };
    };
    assert.equal(status.dataDir, '/var/lib/berth');
    assert.equal(status.pluginsDir, '/var/lib/berth/plugins_registry');
    assert.equal(status.api.socket, '/run/berth/berth.sock');
    // From /etc/berth/config.yaml.
    assert.equal(status.objects.strategy, 'Get');
    const firstLog = JSON.parse(readFileSync(dir.join('daemon.err'), 'utf8').split('\n')[0] as string) as {
      level: string;
    };
    assert.equal(typeof firstLog.level, 'string', 'logFormat: json from the file');
    assert.equal(
      readFileSync(dir.join('modes.txt'), 'utf8'),
      '700 /var/lib/berth\n600 /var/lib/berth/state.db\n700 /run/berth\n',
    );
    assert.match(readFileSync(dir.join('daemon.out'), 'utf8'), /API on \/run\/berth\/berth\.sock/);
    // CAP_DAC_OVERRIDE (bit 1) and CAP_FOWNER (bit 3) only, as CapabilityBoundingSet= in the unit.
    assert.equal(
      readFileSync(dir.join('privileges.txt'), 'utf8'),
      'CapEff:\t000000000000000a\nNoNewPrivs:\t1\n',
    );
    const fields = receiver.fields();
    assert.ok(fields.includes('READY=1'), receiver.messages.join(' | '));
    assert.ok(fields.indexOf('STOPPING=1') > fields.indexOf('READY=1'), receiver.messages.join(' | '));
  });

  it('an invalid /etc/berth/config.yaml fails with exit 2 naming the file and the key; a missing one is no error', {
    timeout: 120_000,
  }, async (t) => {
    if (reason !== undefined) {
      t.skip(reason);
      return;
    }
    const dir = createTempDir();
    t.after(() => dir.remove());
    const run = await runInNamespace(
      dir.path,
      `
printf 'logLevel: chatty\\n' > /etc/berth/config.yaml
set +e
berth run > /dev/null 2> "$WORK/invalid.err"
echo $? > "$WORK/invalid.code"
rm /etc/berth/config.yaml
berth config show > "$WORK/show.txt" 2>&1
echo $? > "$WORK/show.code"
`,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(readFileSync(dir.join('invalid.code'), 'utf8').trim(), '2');
    assert.match(
      readFileSync(dir.join('invalid.err'), 'utf8'),
      /^berth: config \/etc\/berth\/config\.yaml: logLevel: expected one of trace\|debug/,
    );
    assert.equal(readFileSync(dir.join('show.code'), 'utf8').trim(), '0', readIfAny(dir.join('show.txt')));
    assert.match(readFileSync(dir.join('show.txt'), 'utf8'), /dataDir\s+\/var\/lib\/berth\s+default/);
  });

  it('an unwritable /run/berth fails the start, naming the path', { timeout: 120_000 }, async (t) => {
    if (reason !== undefined) {
      t.skip(reason);
      return;
    }
    const dir = createTempDir();
    t.after(() => dir.remove());
    const run = await runInNamespace(
      dir.path,
      `
mount -o remount,ro /run
set +e
berth run > /dev/null 2> "$WORK/run.err"
echo $? > "$WORK/run.code"
`,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(readFileSync(dir.join('run.code'), 'utf8').trim(), '1');
    assert.match(
      readFileSync(dir.join('run.err'), 'utf8'),
      /^berth: the API socket directory \/run\/berth is not writable \(EROFS\)/,
    );
  });
});

function readIfAny(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
