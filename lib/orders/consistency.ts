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
  /** After a write for `scope` committed: its token, now the floor of that scope's pages. */
  wrote: (scope: OrderScope | undefined) => Promise<string>
  /** The positions a page for `scope` must include: the scope's last write, and a client's token. */
  floorsOf: (scope: OrderScope | undefined, consistency: unknown) => string[]
}

/**
 * The floors of one instance's callers over `reads`. A floor is forgotten once every replica has
 * replayed it (the storage then serves no page without it), so memory holds only the scopes that
 * wrote within the replicas' lag.
 */
export function floorsOver (reads: ReplicaReads): Floors {
  const floors = new Map<string, string>()
  let sweepAt = FIRST_SWEEP
  return {
    async wrote (scope) {
      const token = await reads.position()
      floors.set(callerOf(scope), token)
      if (floors.size >= sweepAt) {
        for (const [caller, floor] of floors) if (reads.settled(floor)) floors.delete(caller)
        sweepAt = Math.max(FIRST_SWEEP, floors.size * 2)
      }
      return token
    },
    floorsOf (scope, consistency) {
      const tokens: string[] = []
      if (consistency !== undefined) {
        if (typeof consistency !== 'string' || !reads.wellFormed(consistency)) throw new codes.ORDER_INVALID_CONSISTENCY()
        tokens.push(consistency)
      }
      const caller = callerOf(scope)
      const floor = floors.get(caller)
      if (floor !== undefined) {
        if (reads.settled(floor)) floors.delete(caller)
        else tokens.push(floor)
      }
      return tokens
    }
  }
}
