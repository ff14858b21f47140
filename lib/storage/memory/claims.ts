// Idempotency claims in memory (of creates and of changes): the live claim of each key, and a queue that purges expired ones in order.
import type { Order } from '../../http/schemas.js'
import type { IdempotencyClaim } from '../order-storage.js'

export interface StoredClaim {
  fingerprint: string
  orderId: string
  expiresAt: string
  /** A change's claim: the order as the change left it. */
  order?: Order
}

export interface MemoryClaims {
  /** The claim of `key` that is live at `instant`, if any. */
  live: (key: string, instant: string) => StoredClaim | undefined
  /** Stores `claim` for the order it created, or for the order a change left (`order`). */
  store: (claim: IdempotencyClaim, orderId: string, order?: Order) => void
  /** Deletes at most `limit` claims that expired at or before `now`; returns how many. */
  purge: (now: string, limit: number) => number
}

export function memoryClaims (): MemoryClaims {
  const claims = new Map<string, StoredClaim>()
  // Claims in the order they were made, for purging expired ones; `head` is the oldest unpurged one.
  const queue: Array<{ key: string, expiresAt: string }> = []
  let head = 0
  return {
    live (key, instant) {
      const stored = claims.get(key)
      return stored !== undefined && stored.expiresAt > instant ? stored : undefined
    },
    store ({ key, fingerprint, expiresAt }, orderId, order) {
      claims.set(key, order === undefined ? { fingerprint, orderId, expiresAt } : { fingerprint, orderId, expiresAt, order })
      queue.push({ key, expiresAt })
    },
    /** Claims expire in the order they were made (one TTL for all), so the oldest run of expired ones goes. */
    purge (now, limit) {
      let count = 0
      for (; head < queue.length && count < limit; head++) {
        const { key, expiresAt } = queue[head]!
        if (expiresAt > now) break
        // A key taken over after it expired is queued again with its new claim, which stays.
        if (claims.get(key)?.expiresAt === expiresAt) {
          claims.delete(key)
          count++
        }
      }
      if (head > 1024 && head * 2 > queue.length) {
        queue.splice(0, head)
        head = 0
      }
      return count
    }
  }
}
