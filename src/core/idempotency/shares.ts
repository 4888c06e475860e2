/**
 * How a bounded idempotency store shares its room (records, bytes) between owners, the same
 * rule in every store. No record is ever evicted before its lifetime ends, so fairness can only
 * come from refusing new keys, and the rule must keep room for whoever has none yet:
 *
 * - the store holds at most `max` (beyond, every new key is refused: `store`);
 * - an owner may hold at most its share (`perOwner`), or its new keys are refused (`owner`);
 * - the last eighth of the store is kept for owners holding fewer than {@link FIRST_RECORDS}
 *   records: past them, an owner's new key is refused (`store`) once the rest is used up.
 *
 * So however few owners fill the store, any owner holding nothing stores its first records:
 * the reserve holds `max / 8 / FIRST_RECORDS` owners' first records at once.
 */

/** Records an owner may always store while the reserve lasts. */
export const FIRST_RECORDS = 16
const RESERVE_SHARE = 8

/** The part of `max` kept for owners' first records. */
export function reserveOf (max: number): number {
  return Math.floor(max / RESERVE_SHARE)
}

export interface ShareUse {
  /** Used in the whole store, and by this owner, before the new record. */
  readonly used: number
  readonly ownerUsed: number
  /** What the new record costs (1 for a count of records, its bytes for a byte bound). */
  readonly cost: number
  readonly max: number
  readonly perOwner: number
  /** The owner holds fewer than `FIRST_RECORDS` records. */
  readonly firstRecords: boolean
}

/** Why a new record is refused (its owner's share, or the store), or undefined when it fits. */
export function shareRefusal (use: ShareUse): 'owner' | 'store' | undefined {
  if (use.used + use.cost > use.max) return 'store'
  if (use.ownerUsed + use.cost > use.perOwner) return 'owner'
  return !use.firstRecords && use.used + use.cost > use.max - reserveOf(use.max) ? 'store' : undefined
}
