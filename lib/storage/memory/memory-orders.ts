// Orders in memory: by id, number and reference, the sorted runs of every page (page-indexes.ts), and the idempotency claims of creates and changes; each change appends its event.
import type { OrderEvent } from '../../feed/events.js'
import type { Order } from '../../http/schemas.js'
import type { ChangesCapability, OrdersCapability, StorageListQuery } from '../order-storage.js'
import { memoryClaims } from './claims.js'
import { handed, kept } from './kept.js'
import { idPositions } from './id-positions.js'
import { matches, pageIndexes } from './page-indexes.js'
import { precedes } from './sorted.js'

// An id of another type is refused, never coerced into one that names another customer's orders.
function stringId (id: unknown): void {
  if (typeof id !== 'string') throw new TypeError(`fastify-order: expected a string id, got ${typeof id}`)
}

/**
 * The orders of a memory storage. `append` stores a change's event, or throws having stored nothing:
 * it is called in the same synchronous step as the change, after every other check that could refuse
 * it and before anything is changed, so both are stored or neither.
 */
export function memoryOrders (append: (event: OrderEvent) => void): OrdersCapability & ChangesCapability {
  // Numbers are 1, 2, 3… in creation order: order n is at n - 1, an append rather than a hashed insert.
  const byNumber: Order[] = []
  // Each order's id at its place in byNumber: one probe of a typed array finds an order by id, where a
  // Map of a million orders read a stored key string at each step of a chain, far apart in memory.
  const positions = idPositions(position => byNumber[position]?.id, () => ({ first: 0, end: byNumber.length }))
  const byId = (id: string): Order | undefined => {
    // Only a string is an id: anything else names no order (as a Map would find none).
    const position = typeof id === 'string' ? positions.get(id) : undefined
    return position === undefined ? undefined : byNumber[position]
  }
  // A reference is unique per customer within a store: by reference, customer and store ('' for none,
  // which no store key is), the order that has it.
  const byCustomerReference = new Map<string, Map<string, Map<string, Order>>>()
  const storesOf = (reference: string, customerId: string) => byCustomerReference.get(reference)?.get(customerId)
  const indexes = pageIndexes(() => byNumber)
  const claims = memoryClaims()

  const create: OrdersCapability['create'] = async (newOrder, event, claim) => {
    const live = claim === undefined ? undefined : claims.live(claim.key, newOrder.createdAt)
    if (live !== undefined) return { created: false, order: handed(byId(live.orderId)!), fingerprint: live.fingerprint }
    const { reference, customerId, store = '' } = newOrder
    if (reference !== undefined && storesOf(reference, customerId)?.has(store) === true) return { created: false, referenceTaken: true }
    // Taken at the next number: should the event be refused, the id names nothing there, and the
    // next create takes that number.
    if (!positions.add(newOrder.id, byNumber.length)) throw new Error(`order id ${newOrder.id} is already stored`)
    // The plugin's order and event stay as they were given: what is stored is a numbered copy.
    const order = kept(newOrder, byNumber.length + 1)
    append({ id: event.id, type: 'created', at: event.at, order })
    byNumber.push(order)
    if (reference !== undefined) {
      const byCustomer = byCustomerReference.get(reference) ?? byCustomerReference.set(reference, new Map()).get(reference)!
      const byStore = byCustomer.get(customerId) ?? byCustomer.set(customerId, new Map()).get(customerId)!
      byStore.set(store, order)
    }
    indexes.add(order)
    if (claim !== undefined) claims.store(claim, order.id)
    return { created: true, order: handed(order) }
  }

  /**
   * The few orders a lookup names (by number, ids, or reference and customer: one per store), or
   * undefined when the query names none.
   */
  function named ({ number, ids, reference, customerId, store }: StorageListQuery): Array<Order | undefined> | undefined {
    if (number !== undefined) return [byNumber[number - 1]]
    if (ids !== undefined) return [...new Set(ids)].map(byId)
    if (reference === undefined || customerId === undefined) return undefined
    const stores = storesOf(reference, customerId)
    return store === undefined ? [...stores?.values() ?? []] : [stores?.get(store)]
  }

  function list (query: StorageListQuery): Order[] {
    if (query.customerId !== undefined) stringId(query.customerId)
    query.ids?.forEach(stringId)
    if (query.reference !== undefined) stringId(query.reference)
    if (query.store !== undefined) stringId(query.store)
    const orders = named(query)
    if (orders === undefined) return indexes.page(query)
    const { after } = query
    return orders
      .filter((order): order is Order => order !== undefined && matches(order, query) && (after === undefined || precedes(after, order, query.order)))
      .sort((a, b) => precedes(a, b, query.order) ? -1 : 1)
      .slice(0, query.limit)
  }

  const replace: OrdersCapability['replace'] = async (next, expectedVersion, event, claim) => {
    const previous = byId(next.id)
    if (previous === undefined || previous.version !== expectedVersion) return false
    if (claim !== undefined && claims.live(claim.key, event.at) !== undefined) return false
    // The plugin keeps its order to answer with: what is stored is a copy, and the event carries it.
    const order = kept(next, previous.number)
    append({ ...event, order })
    byNumber[previous.number - 1] = order
    if (order.reference !== undefined) storesOf(order.reference, order.customerId)!.set(order.store ?? '', order)
    indexes.replace(previous, order)
    // A change's claim answers with the order as the change left it, whatever comes after.
    if (claim !== undefined) claims.store(claim, order.id, order)
    return true
  }

  const readChangeClaim: ChangesCapability['readChangeClaim'] = async (key, now) => {
    const live = claims.live(key, now)
    // A change's key (spelled apart from a create's by the plugin) names a claim stored with its order.
    return live === undefined ? undefined : { fingerprint: live.fingerprint, order: handed(live.order!) }
  }

  return {
    create,
    get: async (id) => {
      const order = byId(id)
      return order === undefined ? undefined : handed(order)
    },
    list: async (query) => list(query).map(handed),
    replace,
    purgeIdempotencyKeys: async (now, limit) => claims.purge(now, limit),
    readChangeClaim
  }
}
