// Orders in memory: by id, number and reference, sorted indexes for every page, and the idempotency claims of creates and changes; each change appends its event.
import type { OrderEvent } from '../../feed/events.js'
import type { Order } from '../../http/schemas.js'
import type { ChangesCapability, OrdersCapability, StorageListQuery } from '../order-storage.js'
import { memoryClaims } from './claims.js'
import { comparePositions } from '../../orders/position.js'
import { insert, mergePage, precedes, remove, swap } from './sorted.js'

/**
 * The equality filters the sorted indexes answer: each index keeps one run per value of these fields
 * and a status, so a page walks exactly the orders it lists, one run per status of the filter, merged.
 * A page's equality filters pick the index with exactly those fields. A run's key joins the status
 * and the values with NULs: only the last field may hold a NUL (a customer id; a store key and a
 * balance's sign never do), so keys never collide. `balance` is the sign of the order's balance.
 */
const INDEXED: ReadonlyArray<readonly EqualityFilter[]> = [
  [], ['customerId'], ['store'], ['store', 'customerId'],
  ['balance'], ['balance', 'customerId'], ['balance', 'store'], ['balance', 'store', 'customerId']
]

type EqualityFilter = 'customerId' | 'store' | 'balance'

const EQUALITY = [...new Set(INDEXED.flat())]

// What a list query holds besides its equality filters on stored properties: walked, looked up or
// derived (the balance's sign), never compared as equal to a property.
const NOT_EQUALITY = new Set(['order', 'after', 'limit', 'statuses', 'ids', 'createdFrom', 'createdTo', 'balance'])

/** The sign of an order's balance, as `filter.balance` names it; an order stored without a balance owes its total. */
function balanceOf ({ balance, total }: Order & { balance?: number }): NonNullable<StorageListQuery['balance']> {
  const owed = balance ?? total
  return owed > 0 ? 'due' : owed === 0 ? 'settled' : 'owed'
}

/** The value of an index field of an order. */
function fieldOf (order: Order, field: EqualityFilter): string | undefined {
  return field === 'balance' ? balanceOf(order) : order[field]
}

/** Whether `order` passes every filter of `query` but the cursor, which the walk applies. */
function matches (order: Order, query: StorageListQuery): boolean {
  const { statuses, ids, createdFrom, createdTo, balance } = query
  if ((statuses !== undefined && !statuses.includes(order.status)) || (ids !== undefined && !ids.includes(order.id)) ||
    (createdFrom !== undefined && order.createdAt < createdFrom) || (createdTo !== undefined && order.createdAt >= createdTo) ||
    (balance !== undefined && balanceOf(order) !== balance)) return false
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
function runKey (status: string, fields: readonly EqualityFilter[], valueOf: (field: EqualityFilter) => unknown): string | undefined {
  let key = status
  for (const field of fields) {
    const value = valueOf(field)
    if (value === undefined) return undefined
    key += `\u0000${value as string}`
  }
  return key
}

/** The index whose fields are exactly the equality filters `query` gives. */
function indexOf (query: StorageListQuery): number {
  return INDEXED.findIndex(fields => EQUALITY.every(field => fields.includes(field) === (query[field] !== undefined)))
}

/**
 * The sorted indexes of pages, kept in step with every stored change. Those by the balance's sign are
 * built at the first page that asks for one (from `all`, every stored order) and kept from then on:
 * a host with changes off never asks, and never pays for them.
 */
function pageIndexes (all: () => Iterable<Order>) {
  const byIndex = INDEXED.map(() => new Map<string, Order[]>())
  let balanced = false
  const kept = (fields: readonly EqualityFilter[]) => balanced || !fields.includes('balance')
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
        if (!kept(fields)) return
        const key = runKey(order.status, fields, field => fieldOf(order, field))
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
        if (!kept(fields)) return
        // Customer and store never change, so an order is in the same indexes at every version; its
        // status and balance move it between runs.
        const before = runKey(previous.status, fields, field => fieldOf(previous, field))
        const after = runKey(order.status, fields, field => fieldOf(order, field))
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
      if (!kept(fields)) {
        balanced = true
        INDEXED.forEach((fields, i) => {
          if (!fields.includes('balance')) return
          for (const order of all()) {
            const key = runKey(order.status, fields, field => fieldOf(order, field))
            if (key !== undefined) runOf(i, key).push(order)
          }
          for (const run of byIndex[i]!.values()) run.sort(comparePositions)
        })
      }
      const runs = byIndex[index]!
      return mergePage([...query.statuses ?? statuses].map(status => runs.get(runKey(status, fields, field => query[field])!)), query)
    }
  }
}

/**
 * The orders of a memory storage. `append` stores a change's event, or throws having stored nothing:
 * it is called in the same synchronous step as the change, after every other check that could refuse
 * it and before anything is changed, so both are stored or neither.
 */
export function memoryOrders (append: (event: OrderEvent) => void): OrdersCapability & ChangesCapability {
  const byId = new Map<string, Order>()
  // Numbers are 1, 2, 3… in creation order: order n is at n - 1, an append rather than a hashed insert.
  const byNumber: Order[] = []
  // A reference is unique per customer within a store: by reference, customer and store ('' for none,
  // which no store key is), the order that has it.
  const byCustomerReference = new Map<string, Map<string, Map<string, Order>>>()
  const storesOf = (reference: string, customerId: string) => byCustomerReference.get(reference)?.get(customerId)
  const indexes = pageIndexes(() => byId.values())
  const claims = memoryClaims()

  const create: OrdersCapability['create'] = async (newOrder, event, claim) => {
    const live = claim === undefined ? undefined : claims.live(claim.key, newOrder.createdAt)
    if (live !== undefined) return { created: false, order: byId.get(live.orderId)!, fingerprint: live.fingerprint }
    const { reference, customerId, store = '' } = newOrder
    if (reference !== undefined && storesOf(reference, customerId)?.has(store) === true) return { created: false, referenceTaken: true }
    if (byId.has(newOrder.id)) throw new Error(`order id ${newOrder.id} is already stored`)
    // The plugin's order and event stay as they were given: what is stored is a numbered copy (made
    // by Object.assign, which V8 sizes to fit; a spread leaves room for more properties in every order).
    const order: Order = Object.assign({}, newOrder, { number: byNumber.length + 1 })
    append({ id: event.id, type: 'created', at: event.at, order })
    byId.set(order.id, order)
    byNumber.push(order)
    if (reference !== undefined) {
      const byCustomer = byCustomerReference.get(reference) ?? byCustomerReference.set(reference, new Map()).get(reference)!
      const byStore = byCustomer.get(customerId) ?? byCustomer.set(customerId, new Map()).get(customerId)!
      byStore.set(store, order)
    }
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

  const replace: OrdersCapability['replace'] = async (order, expectedVersion, event, claim) => {
    const previous = byId.get(order.id)
    if (previous === undefined || previous.version !== expectedVersion) return false
    if (claim !== undefined && claims.live(claim.key, event.at) !== undefined) return false
    append(event)
    byId.set(order.id, order)
    byNumber[order.number - 1] = order
    if (order.reference !== undefined) storesOf(order.reference, order.customerId)!.set(order.store ?? '', order)
    indexes.replace(previous, order)
    // A change's claim answers with the order as the change left it, whatever comes after.
    if (claim !== undefined) claims.store(claim, order.id, order)
    return true
  }

  const readChangeClaim: ChangesCapability['readChangeClaim'] = async (key, now) => {
    const live = claims.live(key, now)
    // A change's key (spelled apart from a create's by the plugin) names a claim stored with its order.
    return live === undefined ? undefined : { fingerprint: live.fingerprint, order: live.order! }
  }

  return {
    create,
    get: async (id) => byId.get(id),
    list: async (query) => list(query),
    replace,
    purgeIdempotencyKeys: async (now, limit) => claims.purge(now, limit),
    readChangeClaim
  }
}
