/**
 * Keys for objects and pods. Stores key objects by (namespace, name); the
 * manager keys pods by (namespace, name, uid) so a pod recreated under the
 * same name is a different registration (kubernetes#107831).
 */
export interface ObjectKey {
  namespace: string;
  name: string;
}

export interface PodKey {
  namespace: string;
  name: string;
  uid: string;
}

/** A map key for (namespace, name) that cannot collide whatever the names contain. */
export function objectKeyString(namespace: string, name: string): string {
  return JSON.stringify([namespace, name]);
}

/** A map key for (namespace, name, uid). */
export function podKeyString(key: PodKey): string {
  return JSON.stringify([key.namespace, key.name, key.uid]);
}
