// Orders in memory: by id, number and reference, two sorted indexes, and their idempotency claims; each change appends its event.
import type { OrderEvent } from '../../events.js'
import type { NewOrder, Order } from '../../schemas.js'
import type { CreateResult, IdempotencyClaim, NewOrderCreatedEvent, OrderStore, StorageListQuery } from '../types.js'
import { memoryClaims } from './claims.js'
import { insert, mergePage, precedes, remove, swap } from './sorted.js'

function matches (order: Order, query: StorageListQuery): boolean {
  const { customerId, number, reference, ids, statuses, createdFrom, createdTo, after } = query
  return (customerId === undefined || order.customerId === customerId) &&
    (ids === undefined || ids.includes(order.id)) &&
    (number === undefined || order.number === number) &&
    (reference === undefined || order.reference === reference) &&
    (statuses === undefined || statuses.includes(order.status)) &&
    (createdFrom === undefined || order.createdAt >= createdFrom) &&
    (createdTo === undefined || order.createdAt < createdTo) &&
    (after === undefined || precedes(after, order, query.order))
}

/**
 * The orders of a memory storage. `append` stores a change's event: it is called in the same
 * synchronous step as the change, after every check that could refuse it, so both are stored or neither.
 */
export function memoryOrders (append: (event: OrderEvent) => void, assertNewEvent: (event: OrderEvent) => void): OrderStore {
  // Two indexes answer every filter: one per status, one per (customer, status). Without a status
  // filter a page merges the walks of every status; there are few, so a page still costs the same
  // at any store size, and each create pays for two index inserts, not four.
  const byId = new Map<string, Order>()
  const byStatus = new Map<string, Order[]>()
  const byCustomerStatus = new Map<string, Order[]>()
  const claims = memoryClaims()
  // Lookups by number, and by reference then customer (a reference is unique per customer).
  const byNumber = new Map<number, Order>()
  const byReference = new Map<string, Map<string, Order>>()
  let lastNumber = 0

  const indexOf = (map: Map<string, Order[]>, key: string): Order[] => {
    let orders = map.get(key)
    if (orders === undefined) map.set(key, orders = [])
    return orders
  }
  const stringId = (id: unknown): void => {
    if (typeof id !== 'string') throw new TypeError(`fastify-order: expected a string id, got ${typeof id}`)
  }
  // Statuses never hold a NUL, so the first NUL ends the status and the key is unambiguous.
  const customerStatusKey = (customerId: string, status: string) => `${status}\u0000${customerId}`

  function create (newOrder: NewOrder, event: NewOrderCreatedEvent, claim?: IdempotencyClaim): CreateResult {
    const live = claim === undefined ? undefined : claims.live(claim.key, newOrder.createdAt)
    if (live !== undefined) return { created: false, order: byId.get(live.orderId)!, fingerprint: live.fingerprint }
    const { reference, customerId } = newOrder
    if (reference !== undefined && byReference.get(reference)?.has(customerId) === true) return { created: false, referenceTaken: true }
    if (byId.has(newOrder.id)) throw new Error(`order id ${newOrder.id} is already stored`)
    assertNewEvent(event as OrderEvent)
    // The plugin hands over an order and event of its own: numbered in place rather than copied.
    const order = newOrder as Order
    order.number = ++lastNumber
    byId.set(order.id, order)
    byNumber.set(order.number, order)
    if (reference !== undefined) {
      const byCustomer = byReference.get(reference)
      if (byCustomer === undefined) byReference.set(reference, new Map([[customerId, order]]))
      else byCustomer.set(customerId, order)
    }
    const created = event as OrderEvent
    created.order = order
    append(created)
    insert(indexOf(byStatus, order.status), order)
    insert(indexOf(byCustomerStatus, customerStatusKey(order.customerId, order.status)), order)
    if (claim !== undefined) claims.store(claim, order.id)
    return { created: true, order }
  }

  /** The few orders a lookup names (by number, ids or reference), or undefined when the filter has none. */
  function candidatesOf ({ number, ids, reference, customerId }: StorageListQuery): Iterable<Order | undefined> | undefined {
    if (number !== undefined) return [byNumber.get(number)]
    if (ids !== undefined) return [...new Set(ids)].map(id => byId.get(id))
    if (reference === undefined) return undefined
    const byCustomer = byReference.get(reference)
    return customerId === undefined ? byCustomer?.values() ?? [] : [byCustomer?.get(customerId)]
  }

  function list (query: StorageListQuery): Order[] {
    const { customerId, statuses, ids, limit } = query
    // An id of another type is refused, never coerced into one that names another customer's orders.
    if (customerId !== undefined) stringId(customerId)
    ids?.forEach(stringId)
    if (query.reference !== undefined) stringId(query.reference)
    const candidates = candidatesOf(query)
    if (candidates !== undefined) {
      const found: Order[] = []
      for (const order of candidates) {
        if (order !== undefined && matches(order, query)) found.push(order)
      }
      return found.sort((a, b) => precedes(a, b, query.order) ? -1 : 1).slice(0, limit)
    }
    // Indexes that answer the filter exactly, so no order is read and skipped.
    const wanted = statuses ?? [...byStatus.keys()]
    return mergePage(customerId === undefined
      ? wanted.map(status => byStatus.get(status))
      : wanted.map(status => byCustomerStatus.get(customerStatusKey(customerId, status))), query)
  }

  function replace (order: Order, expectedVersion: number, event: OrderEvent): boolean {
    const previous = byId.get(order.id)
    if (previous === undefined || previous.version !== expectedVersion) return false
    assertNewEvent(event)
    byId.set(order.id, order)
    byNumber.set(order.number, order)
    if (order.reference !== undefined) byReference.get(order.reference)!.set(order.customerId, order)
    append(event)
    const byCustomerKey = customerStatusKey(order.customerId, order.status)
    if (previous.status !== order.status) {
      remove(byStatus.get(previous.status)!, previous)
      remove(byCustomerStatus.get(customerStatusKey(previous.customerId, previous.status))!, previous)
      insert(indexOf(byStatus, order.status), order)
      insert(indexOf(byCustomerStatus, byCustomerKey), order)
    } else {
      swap(byStatus.get(order.status)!, order)
      swap(byCustomerStatus.get(byCustomerKey)!, order)
    }
    return true
  }

  return {
    create: async (order, event, claim) => create(order, event, claim),
    get: async (id) => byId.get(id),
    list: async (query) => list(query),
    replace: async (order, expectedVersion, event) => replace(order, expectedVersion, event),
    purgeIdempotencyKeys: async (now, limit) => claims.purge(now, limit)
  }
}
