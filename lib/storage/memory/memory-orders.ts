// Orders in memory: by id, number and reference, sorted indexes for every page, and their idempotency claims; each change appends its event.
import type { OrderEvent } from '../../feed/events.js'
import type { Order } from '../../http/schemas.js'
import type { OrdersCapability, StorageListQuery } from '../order-storage.js'
import { memoryClaims } from './claims.js'
import { insert, mergePage, precedes, remove, swap } from './sorted.js'

/**
 * The equality filters the sorted indexes answer: each index keeps one run per value of these fields
 * and a status, so a page walks exactly the orders it lists, one run per status of the filter, merged.
 * A page's equality filters pick the index with exactly those fields. A run's key joins the status
 * and the values with NULs: only the last field may hold a NUL (a customer id; a store key never
 * does), so keys never collide.
 */
const INDEXED: ReadonlyArray<readonly EqualityFilter[]> = [[], ['customerId'], ['store'], ['store', 'customerId']]

type EqualityFilter = 'customerId' | 'store'

const EQUALITY = [...new Set(INDEXED.flat())]

// What a list query holds besides its equality filters: walked or looked up, never compared as equal.
const NOT_EQUALITY = new Set(['order', 'after', 'limit', 'statuses', 'ids', 'createdFrom', 'createdTo'])

/** Whether `order` passes every filter of `query` but the cursor, which the walk applies. */
function matches (order: Order, query: StorageListQuery): boolean {
  const { statuses, ids, createdFrom, createdTo } = query
  if ((statuses !== undefined && !statuses.includes(order.status)) || (ids !== undefined && !ids.includes(order.id)) ||
    (createdFrom !== undefined && order.createdAt < createdFrom) || (createdTo !== undefined && order.createdAt >= createdTo)) return false
  for (const key in query) {
    const value = query[key as keyof StorageListQuery]
    if (value !== undefined && !NOT_EQUALITY.has(key) && order[key as keyof Order] !== value) return false
  }
  return true
}

// An id of another type is refused, never coerced into one that names another customer's orders.
function stringId (id: unknown): void {
  if (typeof id !== 'string') throw new TypeError(`fastify-order: expected a string id, got ${typeof id}`)
}

/**
 * The key of an index run: the status, then the index's field values, joined by NULs; undefined for an
 * order the index does not hold, one without a value of its fields (no store).
 */
function runKey (status: string, fields: readonly EqualityFilter[], values: Partial<Record<EqualityFilter, unknown>>): string | undefined {
  let key = status
  for (const field of fields) {
    const value = values[field]
    if (value === undefined) return undefined
    key += `\u0000${value as string}`
  }
  return key
}

/** The index whose fields are exactly the equality filters `query` gives. */
function indexOf (query: StorageListQuery): number {
  return INDEXED.findIndex(fields => EQUALITY.every(field => fields.includes(field) === (query[field] !== undefined)))
}

/** The sorted indexes of pages, kept in step with every stored change. */
function pageIndexes () {
  const byIndex = INDEXED.map(() => new Map<string, Order[]>())
  const runOf = (index: number, key: string): Order[] => {
    let orders = byIndex[index]!.get(key)
    if (orders === undefined) byIndex[index]!.set(key, orders = [])
    return orders
  }
  // References walk in page order too, one run per reference across customers, and one per store and
  // reference (joined by a NUL, which no store key holds), so a store's page never walks other stores'.
  const byReference = new Map<string, Order[]>()
  const byStoreReference = new Map<string, Order[]>()
  const runIn = (runs: Map<string, Order[]>, key: string) => runs.get(key) ?? runs.set(key, []).get(key)!
  const storeReference = (store: string, reference: string) => `${store}\u0000${reference}`
  const statuses = new Set<string>()
  return {
    add (order: Order): void {
      statuses.add(order.status)
      INDEXED.forEach((fields, i) => {
        const key = runKey(order.status, fields, order)
        if (key !== undefined) insert(runOf(i, key), order)
      })
      if (order.reference === undefined) return
      insert(runIn(byReference, order.reference), order)
      if (order.store !== undefined) insert(runIn(byStoreReference, storeReference(order.store, order.reference)), order)
    },
    /** Puts `order` where `previous` (the same order, another version) was. */
    replace (previous: Order, order: Order): void {
      statuses.add(order.status)
      INDEXED.forEach((fields, i) => {
        // The fields never change (customer and store): an order is in the same indexes at every version.
        const before = runKey(previous.status, fields, previous)
        const after = runKey(order.status, fields, order)
        if (before === undefined || after === undefined) return
        if (before === after) swap(byIndex[i]!.get(before)!, order)
        else {
          remove(byIndex[i]!.get(before)!, previous)
          insert(runOf(i, after), order)
        }
      })
      if (order.reference === undefined) return
      swap(byReference.get(order.reference)!, order)
      if (order.store !== undefined) swap(byStoreReference.get(storeReference(order.store, order.reference))!, order)
    },
    /** A page walked from the runs that hold exactly the query's orders, or from a reference's run checking the rest. */
    page (query: StorageListQuery): Order[] {
      if (query.reference !== undefined) {
        const run = query.store === undefined ? byReference.get(query.reference) : byStoreReference.get(storeReference(query.store, query.reference))
        return mergePage([run], query, order => matches(order, query))
      }
      const index = indexOf(query)
      const fields = INDEXED[index]!
      const runs = byIndex[index]!
      return mergePage([...query.statuses ?? statuses].map(status => runs.get(runKey(status, fields, query)!)), query)
    }
  }
}

/**
 * The orders of a memory storage. `append` stores a change's event: it is called in the same
 * synchronous step as the change, after every check that could refuse it, so both are stored or neither.
 */
export function memoryOrders (append: (event: OrderEvent) => void, assertNewEvent: (event: OrderEvent) => void): OrdersCapability {
  const byId = new Map<string, Order>()
  // Numbers are 1, 2, 3… in creation order: order n is at n - 1, an append rather than a hashed insert.
  const byNumber: Order[] = []
  // A reference is unique per customer within a store: by reference, customer and store ('' for none,
  // which no store key is), the order that has it.
  const byCustomerReference = new Map<string, Map<string, Map<string, Order>>>()
  const storesOf = (reference: string, customerId: string) => byCustomerReference.get(reference)?.get(customerId)
  const indexes = pageIndexes()
  const claims = memoryClaims()

  const create: OrdersCapability['create'] = async (newOrder, event, claim) => {
    const live = claim === undefined ? undefined : claims.live(claim.key, newOrder.createdAt)
    if (live !== undefined) return { created: false, order: byId.get(live.orderId)!, fingerprint: live.fingerprint }
    const { reference, customerId, store = '' } = newOrder
    if (reference !== undefined && storesOf(reference, customerId)?.has(store) === true) return { created: false, referenceTaken: true }
    if (byId.has(newOrder.id)) throw new Error(`order id ${newOrder.id} is already stored`)
    assertNewEvent(event as OrderEvent)
    // The plugin's order and event stay as they were given: what is stored is a numbered copy (made
    // by Object.assign, which V8 sizes to fit; a spread leaves room for more properties in every order).
    const order: Order = Object.assign({}, newOrder, { number: byNumber.length + 1 })
    byId.set(order.id, order)
    byNumber.push(order)
    if (reference !== undefined) {
      const byCustomer = byCustomerReference.get(reference) ?? byCustomerReference.set(reference, new Map()).get(reference)!
      const byStore = byCustomer.get(customerId) ?? byCustomer.set(customerId, new Map()).get(customerId)!
      byStore.set(store, order)
    }
    append(Object.assign({}, event, { order }))
    indexes.add(order)
    if (claim !== undefined) claims.store(claim, order.id)
    return { created: true, order }
  }

  /**
   * The few orders a lookup names (by number, ids, or reference and customer: one per store), or
   * undefined when the query names none.
   */
  function named ({ number, ids, reference, customerId, store }: StorageListQuery): Array<Order | undefined> | undefined {
    if (number !== undefined) return [byNumber[number - 1]]
    if (ids !== undefined) return [...new Set(ids)].map(id => byId.get(id))
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

  const replace: OrdersCapability['replace'] = async (order, expectedVersion, event) => {
    const previous = byId.get(order.id)
    if (previous === undefined || previous.version !== expectedVersion) return false
    assertNewEvent(event)
    byId.set(order.id, order)
    byNumber[order.number - 1] = order
    if (order.reference !== undefined) storesOf(order.reference, order.customerId)!.set(order.store ?? '', order)
    append(event)
    indexes.replace(previous, order)
    return true
  }

  return {
    create,
    get: async (id) => byId.get(id),
    list: async (query) => list(query),
    replace,
    purgeIdempotencyKeys: async (now, limit) => claims.purge(now, limit)
  }
}
