/**
 * What the last read of each plugin directory found, so that a periodic
 * rescan can skip reading a directory that has not changed since.
 *
 * A directory's mtime moves whenever an entry in it is created, removed,
 * renamed or re-created in place (a plugin's socket is unlinked and bound
 * again), so an unchanged identity and mtime prove that the read would find
 * the same entries. At 5,000 sockets the periodic rescan's read and stats were
 * about half of an idle node's CPU; with this a quiet directory costs one stat.
 *
 * Timestamps are coarse (the kernel stamps directories from a clock that
 * ticks every few milliseconds), so a change right after a read could carry
 * the same mtime as the read saw. A listing is therefore kept only when the
 * directory's mtime was at least `SETTLED_NS` old at the read; a directory
 * that changed just before is read again next time.
 */

/** How old a directory's mtime must be when it is read for the listing to be trusted later. */
export const SETTLED_NS = 1_000_000_000n;

export interface Listing {
  identity: string;
  modifiedNs: bigint;
  /** Socket entries (known or found), marked seen when the directory is skipped. */
  sockets: string[];
  /** Subdirectories, still walked when their parent is skipped (their own mtimes decide). */
  subdirs: string[];
  /** Symlinks to sockets: their targets live elsewhere and can change unseen, so they are inspected every time. */
  links: string[];
}

export class ListingCache {
  readonly #listings = new Map<string, Listing>();

  /** The listing of `dir` if it still holds: same directory, same mtime. */
  get(dir: string, identity: string, modifiedNs: bigint): Listing | undefined {
    const listing = this.#listings.get(dir);
    if (listing === undefined) return undefined;
    if (listing.identity === identity && listing.modifiedNs === modifiedNs) return listing;
    this.#listings.delete(dir);
    return undefined;
  }

  /** Keeps a complete read of `dir`, if its mtime had settled when it was read (`readAtMs`: wall clock). */
  set(dir: string, listing: Listing, readAtMs: number): void {
    if (listing.modifiedNs + SETTLED_NS > BigInt(Math.floor(readAtMs)) * 1_000_000n) {
      this.#listings.delete(dir);
      return;
    }
    this.#listings.set(dir, listing);
  }

  delete(dir: string): void {
    this.#listings.delete(dir);
  }
}
