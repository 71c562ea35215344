import type { TestContext } from 'node:test';
import {
  createRegistrationServer,
  dialRegistration,
  type RegistrationConnection,
  type RegistrationServer,
  type RegistrationServerOptions,
} from '../../registration/index.js';
import { createTempDir, type TempDir } from '../temp-dir.js';

/**
 * For tests: a started registration server on a socket in its own temp dir,
 * and a fresh connection to it; the test's end closes, stops and removes all three.
 */
export async function connectedServer(
  t: TestContext,
  options: Omit<RegistrationServerOptions, 'socketPath'>,
): Promise<{ dir: TempDir; server: RegistrationServer; conn: RegistrationConnection }> {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const server = createRegistrationServer({ socketPath: dir.join('plugin.sock'), ...options });
  t.after(() => server.stop());
  await server.start();
  const conn = await dialRegistration(server.socketPath, { timeoutMs: 10_000 });
  t.after(() => conn.close());
  return { dir, server, conn };
}
