/**
 * Does a running kubelet seem to own this plugins directory? The kubelet
 * serves `device-plugins/kubelet.sock` beside its `plugins_registry`
 * (`/var/lib/kubelet/{plugins_registry,device-plugins}`); if that socket
 * accepts a connection, a registrar here would tell every plugin a second
 * time, so berth refuses to register unless forced and suggests --observe.
 * A left-over kubelet.sock with no listener (a stopped kubelet) does not count.
 */
import { existsSync, realpathSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { BerthError } from '../common/index.js';

/** How long the kubelet's socket has to accept the probe. */
const PROBE_TIMEOUT_MS = 1_000;

/** The kubelet.sock a kubelet owning `pluginsDir` would serve. */
export function kubeletSocketBeside(pluginsDir: string): string {
  let real = pluginsDir;
  try {
    real = realpathSync(pluginsDir);
  } catch {
    // a missing directory: the path as given
  }
  return join(dirname(real), 'device-plugins', 'kubelet.sock');
}

/** Resolves true when something accepts a connection on `socketPath` within the probe timeout. */
export function socketAnswers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(socketPath);
    const done = (answers: boolean) => {
      clearTimeout(timer);
      probe.destroy();
      resolve(answers);
    };
    const timer = setTimeout(() => done(false), PROBE_TIMEOUT_MS);
    probe.once('connect', () => done(true));
    probe.once('error', () => done(false));
  });
}

/** Throws BERTH_KUBELET_OWNS_DIR when a kubelet answers beside `pluginsDir`. */
export async function refuseKubeletDirectory(pluginsDir: string): Promise<void> {
  const kubeletSocket = kubeletSocketBeside(pluginsDir);
  // No file, nothing to ask (the usual case: no kubelet on this node); a probe would only fail later.
  if (!existsSync(kubeletSocket) || !(await socketAnswers(kubeletSocket))) return;
  throw new BerthError(
    'BERTH_KUBELET_OWNS_DIR',
    `plugins directory ${pluginsDir} looks owned by a running kubelet (${kubeletSocket} answers); a second registrar would notify every plugin twice. Start berth with --observe to watch it, or --force to register anyway`,
    { details: { pluginsDir, kubeletSocket } },
  );
}
