/**
 * The shared object-manager suite over the directory source: objects are
 * written as files (JSON and YAML alternately) and picked up by fs.watch.
 */

import { mkdirSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createDirectorySource } from '../src/objects/index.js';
import { createTempDir } from '../src/testing/index.js';
import { defineObjectManagerSuite } from './object-manager-suite.js';

defineObjectManagerSuite('directory', async () => {
  const dir = createTempDir('berth-objs-');
  const source = createDirectorySource({ root: dir.path, rescanIntervalMs: 2_000 });
  await source.ready();
  let writes = 0;
  const pathFor = (resource: string, namespace: string, name: string, ext: string) =>
    join(dir.path, resource, namespace, `${name}${ext}`);
  return {
    source,
    async put(resource, obj) {
      const namespace = obj.metadata.namespace ?? 'default';
      mkdirSync(join(dir.path, resource, namespace), { recursive: true });
      // Alternate formats; remove the other spelling so there is one file per object.
      const yaml = writes++ % 2 === 1;
      await rm(pathFor(resource, namespace, obj.metadata.name, yaml ? '.json' : '.yaml'), { force: true });
      const text = yaml ? stringify(obj) : JSON.stringify(obj, null, 2);
      await writeFile(pathFor(resource, namespace, obj.metadata.name, yaml ? '.yaml' : '.json'), text);
    },
    async remove(resource, namespace, name) {
      await rm(pathFor(resource, namespace, name, '.json'), { force: true });
      await rm(pathFor(resource, namespace, name, '.yaml'), { force: true });
    },
    async cleanup() {
      await source.stop();
      dir.remove();
    },
  };
});
