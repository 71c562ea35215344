/**
 * How the CLI reads the daemon's answers: the field names and types come from
 * the API's named wire types (berth/daemon/contract), but any field may be
 * missing, because the daemon may be older or newer than this CLI.
 */

/** Every field optional, all the way down (arrays and primitives kept as they are). */
export type Lenient<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { [K in keyof T]?: Lenient<T[K]> | undefined }
    : T;

type KeysOfUnion<U> = U extends unknown ? keyof U : never;

/** The fields of every member of a union in one object type (a field's type: the union of its types). */
export type FieldsOf<U> = {
  [K in KeysOfUnion<U>]: U extends unknown ? (K extends keyof U ? U[K] : never) : never;
};
