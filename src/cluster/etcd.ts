/**
 * Entry point that loads the etcd client (the `etcd3` package takes 0.5-1 s to
 * load), kept apart from index.ts so the CLI and config code stay light.
 */
export { createEtcdClient } from './etcd-connection.js';
