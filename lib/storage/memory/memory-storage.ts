// memoryStorage(): the in-process default, indexed so a page costs the same at any store size.
import type { OrderStorage } from '../order-storage.js'
import { memoryFeed } from './memory-feed.js'
import { memoryOrders } from './memory-orders.js'

/**
 * The embedded default storage: orders live in this process and are gone when it exits.
 * Fine for tests, examples and single-process apps; use a database adapter to keep orders.
 */
export function memoryStorage (): Required<Omit<OrderStorage, 'init' | 'joinTransaction' | 'feedHealth' | 'replicas'>> {
  const { append, ...feed } = memoryFeed()
  return { ...memoryOrders(append), ...feed }
}
