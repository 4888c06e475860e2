import { BundleSet } from './bundle-set.js'

/**
 * The bundles serving now, and how a reload reads them again: the upstreams file is read
 * whole (so a file broken elsewhere refuses the reload too) and its `bundles` replace the
 * serving ones once the catalog took the reload. Other keys of the file take a restart.
 */
export class LiveBundles {
  #current: BundleSet

  constructor (initial: BundleSet, readonly read: () => BundleSet) {
    this.#current = initial
  }

  get current (): BundleSet {
    return this.#current
  }

  /** Install a set read (and checked) for a reload that succeeded. */
  install (next: BundleSet): void {
    this.#current = next
  }
}

/** A gateway without an upstreams file has no bundles (its `/bundles` lists none). */
export function noBundles (): LiveBundles {
  const none = new BundleSet({}, 'no upstreams file')
  return new LiveBundles(none, () => none)
}
