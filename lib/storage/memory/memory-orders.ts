// Orders in memory: by id, number and reference, sorted indexes for every page, and their idempotency claims; each change appends its event.
import type { OrderEvent } from '../../events.js'
import type { Order, PageFilter } from '../../schemas.js'
import type { OrdersCapability, StorageListQuery } from '../order-storage.js'
import { memoryClaims } from './claims.js'
import { insert, mergePage, precedes, remove, swap } from './sorted.js'

/**
 * The equality filters the sorted indexes answer: each index keeps one run per value of these
 * fields and a status, so a page walks exactly the orders it lists, one run per status of the filter,
 * merged. A page's equality filters pick the index with exactly those fields.
 */
const INDEXED: ReadonlyArray<readonly EqualityFilter[]> = [[], ['customerId']]

type EqualityFilter = 'customerId'

/** Filters read through their own index or checked on the few orders a lookup names, not through INDEXED. */
const LOOKUPS = new Set(['statuses', 'ids', 'number', 'reference', 'createdFrom', 'createdTo'])

/** The orders a page could hold, by the filters that are not walked: ranges and lookups are the walk's. */
function matches (order: Order, filter: PageFilter): boolean {
  const { statuses, ids, createdFrom, createdTo, ...equal } = filter
  return (statuses === undefined || statuses.includes(order.status)) &&
    (ids === undefined || ids.includes(order.id)) &&
    (createdFrom === undefined || order.createdAt >= createdFrom) &&
    (createdTo === undefined || order.createdAt < createdTo) &&
    Object.entries(equal).every(([key, value]) => value === undefined || order[key as keyof Order] === value)
}

// An id of another type is refused, never coerced into one that names another customer's orders.
function stringId (id: unknown): void {
  if (typeof id !== 'string') throw new TypeError(`fastify-order: expected a string id, got ${typeof id}`)
}

/** The key of an index run: JSON of the index's field values and the status, so no two runs share one. */
const runKey = (order: Pick<Order, EqualityFilter | 'status'>, fields: readonly EqualityFilter[]) =>
  JSON.stringify([...fields.map(field => order[field]), order.status])

/** The sorted indexes of pages, kept in step with every stored change. */
function pageIndexes () {
  const runs = INDEXED.map(() => new Map<string, Order[]>())
  const runOf = (index: number, key: string): Order[] => {
    let orders = runs[index]!.get(key)
    if (orders === undefined) runs[index]!.set(key, orders = [])
    return orders
  }
  // References walk in page order too, one run per reference across customers.
  const byReference = new Map<string, Order[]>()
  const statuses = new Set<string>()
  return {
    add (order: Order): void {
      statuses.add(order.status)
      INDEXED.forEach((fields, i) => insert(runOf(i, runKey(order, fields)), order))
      if (order.reference !== undefined) insert(byReference.get(order.reference) ?? byReference.set(order.reference, []).get(order.reference)!, order)
    },
    /** Puts `order` where `previous` (the same order, another version) was. */
    replace (previous: Order, order: Order): void {
      statuses.add(order.status)
      INDEXED.forEach((fields, i) => {
        const before = runKey(previous, fields)
        const after = runKey(order, fields)
        if (before === after) swap(runs[i]!.get(before)!, order)
        else {
          remove(runs[i]!.get(before)!, previous)
          insert(runOf(i, after), order)
        }
      })
      if (order.reference !== undefined) swap(byReference.get(order.reference)!, order)
    },
    /** A page walked from the runs that hold exactly the filter's orders, or from a reference's run checking the rest. */
    page (query: StorageListQuery, filter: PageFilter): Order[] {
      if (filter.reference !== undefined) {
        return mergePage([byReference.get(filter.reference)], query, order => matches(order, filter))
      }
      const fixed = (Object.keys(filter) as string[]).filter(key => !LOOKUPS.has(key) && filter[key as keyof PageFilter] !== undefined)
      const index = INDEXED.findIndex(fields => fields.length === fixed.length && fields.every(field => fixed.includes(field)))
      const fields = INDEXED[index]!
      return mergePage([...filter.statuses ?? statuses].map(status => runs[index]!.get(runKey({ ...filter, status } as Order, fields))), query)
    }
  }
}

/** The filter of a list query, apart from how the page is walked. */
function splitQuery ({ order: _order, after: _after, limit: _limit, ...filter }: StorageListQuery) {
  return { filter: filter as PageFilter }
}

/**
 * The orders of a memory storage. `append` stores a change's event: it is called in the same
 * synchronous step as the change, after every check that could refuse it, so both are stored or neither.
 */
export function memoryOrders (append: (event: OrderEvent) => void, assertNewEvent: (event: OrderEvent) => void): OrdersCapability {
  const byId = new Map<string, Order>()
  const byNumber = new Map<number, Order>()
  // A reference is unique per customer: the order of each customer that has it.
  const byCustomerReference = new Map<string, Map<string, Order>>()
  const indexes = pageIndexes()
  const claims = memoryClaims()
  let lastNumber = 0

  const create: OrdersCapability['create'] = async (newOrder, event, claim) => {
    const live = claim === undefined ? undefined : claims.live(claim.key, newOrder.createdAt)
    if (live !== undefined) return { created: false, order: byId.get(live.orderId)!, fingerprint: live.fingerprint }
    const { reference, customerId } = newOrder
    if (reference !== undefined && byCustomerReference.get(reference)?.has(customerId) === true) return { created: false, referenceTaken: true }
    if (byId.has(newOrder.id)) throw new Error(`order id ${newOrder.id} is already stored`)
    assertNewEvent(event as OrderEvent)
    // The plugin's order and event stay as they were given: what is stored is a numbered copy.
    const order: Order = { ...newOrder, number: lastNumber + 1 }
    lastNumber = order.number
    byId.set(order.id, order)
    byNumber.set(order.number, order)
    if (reference !== undefined) {
      const byCustomer = byCustomerReference.get(reference) ?? byCustomerReference.set(reference, new Map()).get(reference)!
      byCustomer.set(customerId, order)
    }
    append({ ...event, order })
    indexes.add(order)
    if (claim !== undefined) claims.store(claim, order.id)
    return { created: true, order }
  }

  /** The few orders a lookup names (by number, ids, or reference and customer), or undefined when the filter names none. */
  function named ({ number, ids, reference, customerId }: PageFilter): Array<Order | undefined> | undefined {
    if (number !== undefined) return [byNumber.get(number)]
    if (ids !== undefined) return [...new Set(ids)].map(id => byId.get(id))
    if (reference !== undefined && customerId !== undefined) return [byCustomerReference.get(reference)?.get(customerId)]
    return undefined
  }

  function list (query: StorageListQuery): Order[] {
    const { filter } = splitQuery(query)
    if (filter.customerId !== undefined) stringId(filter.customerId)
    filter.ids?.forEach(stringId)
    if (filter.reference !== undefined) stringId(filter.reference)
    const orders = named(filter)
    if (orders === undefined) return indexes.page(query, filter)
    const { after } = query
    return orders
      .filter((order): order is Order => order !== undefined && matches(order, filter) && (after === undefined || precedes(after, order, query.order)))
      .sort((a, b) => precedes(a, b, query.order) ? -1 : 1)
      .slice(0, query.limit)
  }

  const replace: OrdersCapability['replace'] = async (order, expectedVersion, event) => {
    const previous = byId.get(order.id)
    if (previous === undefined || previous.version !== expectedVersion) return false
    assertNewEvent(event)
    byId.set(order.id, order)
    byNumber.set(order.number, order)
    if (order.reference !== undefined) byCustomerReference.get(order.reference)!.set(order.customerId, order)
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
