// The shape of a conformance case, and the capabilities cases are grouped by.
import type { OrderStorage, storageMethods } from '../storage/types.js'

/** A capability of OrderStorage: `orders` (OrderStore), `feed` (EventFeedStore), `subscriptions` (SubscriptionStore). */
export type Capability = keyof typeof storageMethods

/**
 * Runs `work` on a client inside a transaction opened on the storage's database, then commits it, or
 * rolls it back when `commit` is false: for storages that implement `joinTransaction`.
 */
export type TransactionRunner = (work: (client: unknown) => Promise<void>, commit: boolean) => Promise<void>

/** What a case may need besides the storage. */
export interface ConformanceContext {
  /** How to open a transaction on the storage's database; needed by a storage with `joinTransaction`. */
  transaction?: TransactionRunner | undefined
}

/** One named behaviour of OrderStorage, checked against a fresh, initialized storage. */
export interface ConformanceCase {
  /** The capability whose methods the case checks. */
  capability: Capability
  name: string
  run: (storage: OrderStorage, context?: ConformanceContext) => Promise<void>
}
