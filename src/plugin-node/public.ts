/**
 * The package entry point berth/plugin-node: what a library user needs. package.json
 * "exports" maps the subpath to this file, not to index.ts, which also carries
 * names only berth's own folders use (lint lets other folders in through
 * index.ts; the package does not export it, so users cannot reach them).
 * scripts/api-report.mjs keeps the names and their signatures in api/.
 */
export { createPluginNode, type HandlerFactory, type PluginNode, type PluginNodeOptions } from './index.js';
