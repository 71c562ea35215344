import { createServer } from 'node:net';
import { dialRegistration } from './index.js';
const srv = createServer((s) => { /* accept, say nothing */ });
await new Promise<void>((r) => srv.listen('/tmp/nongrpc.sock', r));
const t0 = Date.now();
try {
  const c = await dialRegistration('/tmp/nongrpc.sock', { timeoutMs: 1500 });
  console.log('dial ok', Date.now() - t0);
  try { await c.getInfo({ timeoutMs: 500 }); } catch (e) { console.log('getInfo', (e as Error).message); }
  c.close();
} catch (e) { console.log('dial failed', Date.now() - t0, (e as Error).message); }
srv.close();
