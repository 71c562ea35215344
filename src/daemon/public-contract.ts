/**
 * The package entry point berth/daemon/contract: what a client of the daemon's
 * HTTP API needs, the shapes of its answers (daemon/api/wire-types.ts), where
 * a daemon listens by default, and the version. The CLI enters through
 * ./contract.ts, which adds what only the CLI needs (data-dir layout, log
 * formats, the example plugin's type); package.json exports this file.
 * scripts/api-report.mjs keeps the names and their signatures in api/.
 */
export type * from './api/wire-types.js';
export { berthVersion, defaultApiSocket, readApiAddresses, type TcpAddress } from './contract.js';
