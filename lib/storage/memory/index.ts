// memoryStorage(): the in-process default, indexed so a page costs the same at any store size.
import type { OrderStorage } from '../types.js'
import { memoryFeed } from './feed.js'
import { memoryOrders } from './orders.js'

/**
 * The embedded default storage: orders live in this process and are gone when it exits.
 * Fine for tests, examples and single-process apps; use a database adapter to keep orders.
 */
export function memoryStorage (): OrderStorage {
  const { append, assertNewEvent, ...feed } = memoryFeed()
  return { ...memoryOrders(append, assertNewEvent), ...feed }
}
