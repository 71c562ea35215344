// Regenerates every wire type: the root buf.gen.yaml plus each
// src/**/buf.gen.yaml (one per component with protos of its own), all with
// the npm-only toolchain (buf and protoc-gen-es from node_modules).
// Usage: node scripts/generate.mjs (npm run generate).
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function bufTemplates(root = '.') {
  const found = ['buf.gen.yaml'];
  const walk = (dir) => {
    for (const name of readdirSync(join(root, dir)).sort()) {
      const rel = join(dir, name);
      if (name === 'node_modules' || name === 'gen') continue;
      if (statSync(join(root, rel)).isDirectory()) walk(rel);
      else if (name === 'buf.gen.yaml') found.push(rel);
    }
  };
  walk('src');
  return found;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const bin = join(process.cwd(), 'node_modules', '.bin');
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
  for (const template of bufTemplates()) {
    execFileSync(join(bin, 'buf'), ['generate', '--template', template], { stdio: 'inherit', env });
  }
}
