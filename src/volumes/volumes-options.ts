/** Defaults of the CSI volume manager that are not the CSI handler's (those are in handlers/csi/csi-options.ts). */
export const VOLUMES_DEFAULTS = {
  /** The volume state file in the data directory. */
  stateFileName: 'csi-volumes.db',
} as const;
