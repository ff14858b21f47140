// The shape of a conformance case, and the capabilities cases are grouped by.
import type { OrderStorage, storageMethods } from '../storage/types.js'

/** A capability of OrderStorage: `orders` (OrderStore), `feed` (EventFeedStore), `subscriptions` (SubscriptionStore). */
export type Capability = keyof typeof storageMethods

/** One named behaviour of OrderStorage, checked against a fresh, initialized storage. */
export interface ConformanceCase {
  /** The capability whose methods the case checks. */
  capability: Capability
  name: string
  run: (storage: OrderStorage) => Promise<void>
}
