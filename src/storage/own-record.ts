/**
 * Sets an own, enumerable property. Plugin types and names are user input;
 * a plain assignment of "__proto__" would change the object's prototype
 * instead of adding a key.
 */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}
