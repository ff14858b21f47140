// Read-your-writes over replicas: the position of each scope's last write, which its pages must include, until every replica has it.
import { codes } from '../errors.js'
import type { ReplicaReads } from '../storage/order-storage.js'
import type { OrderScope } from './scope.js'

/** How many scopes are remembered before the first sweep of those every replica has caught up with. */
const FIRST_SWEEP = 1024

/** The caller a scope names, as idempotency keys name it: its customer and its store (no scope: one caller). */
function callerOf (scope: OrderScope | undefined): string {
  return scope === undefined ? '' : JSON.stringify([scope.customerId ?? null, scope.store ?? null])
}

export interface Floors {
  /**
   * After a write for `scope` committed: its token, now the floor of that scope's pages. Until it is
   * known, and after a write whose position could not be read until a later one's is, that scope's
   * pages come from the primary.
   */
  wrote: (scope: OrderScope | undefined) => Promise<string>
  /** What a page for `scope` must include: the scope's last write, and a client's token; or the primary. */
  floorsOf: (scope: OrderScope | undefined, consistency: unknown) => { atLeast: string[], primary: boolean }
}

/** The floor of a scope whose last write's position could not be read: no replica is known to have it. */
const UNKNOWN = ''

/**
 * The floors of one instance's callers over `reads`. A floor is forgotten once every replica has
 * replayed it (the storage then serves no page without it), so memory holds only the scopes that
 * wrote within the replicas' lag.
 */
export function floorsOver (reads: ReplicaReads): Floors {
  const floors = new Map<string, string>()
  // The callers with a write whose position is being read, and how many.
  const writing = new Map<string, number>()
  let sweepAt = FIRST_SWEEP
  function done (caller: string): void {
    const left = writing.get(caller)! - 1
    if (left === 0) writing.delete(caller)
    else writing.set(caller, left)
  }
  return {
    async wrote (scope) {
      const caller = callerOf(scope)
      writing.set(caller, (writing.get(caller) ?? 0) + 1)
      let token: string
      try {
        token = await reads.position()
      } catch (err) {
        floors.set(caller, UNKNOWN)
        throw err
      } finally {
        done(caller)
      }
      floors.set(caller, token)
      if (floors.size >= sweepAt) {
        for (const [caller, floor] of floors) if (reads.settled(floor)) floors.delete(caller)
        sweepAt = Math.max(FIRST_SWEEP, floors.size * 2)
      }
      return token
    },
    floorsOf (scope, consistency) {
      const atLeast: string[] = []
      if (consistency !== undefined) {
        if (typeof consistency !== 'string' || !reads.wellFormed(consistency)) throw new codes.ORDER_INVALID_CONSISTENCY()
        atLeast.push(consistency)
      }
      const caller = callerOf(scope)
      const floor = floors.get(caller)
      if (floor !== undefined && floor !== UNKNOWN) {
        if (reads.settled(floor)) floors.delete(caller)
        else atLeast.push(floor)
      }
      return { atLeast, primary: writing.has(caller) || floor === UNKNOWN }
    }
  }
}
