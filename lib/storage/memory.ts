// memoryStorage(): the in-process default, indexed so a page costs the same at any store size.
import type { OrderEvent } from '../events.js'
import type { Order } from '../schemas.js'
import type { CreateResult, IdempotencyClaim, Lease, LeaseRequest, OrderStorage, StorageListQuery } from './types.js'

interface StoredClaim {
  fingerprint: string
  orderId: string
  expiresAt: string
}

interface StoredSubscription {
  holder: string | null
  /** Date.now() after which the lease has lapsed. */
  expiresAt: number
  /** Date.now() of the last time a holder took or renewed the lease. */
  heldAt: number
  /** Feed position of the last event handled (or of the last event stored before a `now` start). */
  position: number
  lastEventId: string | null
}

interface Position {
  createdAt: string
  id: string
}

/** Ascending (createdAt, id) comparison: negative when a comes first. */
function compare (a: Position, b: Position): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1
}

/** Index of the first order at or after `position` in ascending order. */
function lowerBound (orders: readonly Order[], position: Position): number {
  let low = 0
  let high = orders.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (compare(orders[middle]!, position) < 0) low = middle + 1
    else high = middle
  }
  return low
}

function insert (orders: Order[], order: Order): void {
  // The plugin's ids ascend with creation time, so a new order almost always goes last.
  const last = orders[orders.length - 1]
  if (last === undefined || compare(last, order) < 0) orders.push(order)
  else orders.splice(lowerBound(orders, order), 0, order)
}

function remove (orders: Order[], order: Order): void {
  orders.splice(lowerBound(orders, order), 1)
}

/** Puts the new version of an order in its predecessor's place: createdAt and id never change. */
function swap (orders: Order[], order: Order): void {
  orders[lowerBound(orders, order)] = order
}

/** The part of one index a page reads: from `next` towards `end` (exclusive) by `step`. */
interface Run {
  orders: readonly Order[]
  next: number
  end: number
  step: 1 | -1
}

/** The run of one index in the requested direction, within the created range and after the cursor. */
function runOf (orders: readonly Order[], query: StorageListQuery): Run {
  const { createdFrom, createdTo, after } = query
  // '' sorts before every id, so (date, '') bounds the orders created at that date.
  const from = createdFrom === undefined ? 0 : lowerBound(orders, { createdAt: createdFrom, id: '' })
  const to = createdTo === undefined ? orders.length : lowerBound(orders, { createdAt: createdTo, id: '' })
  if (query.order === 'asc') {
    let next = from
    if (after !== undefined) {
      const position = lowerBound(orders, after)
      next = Math.max(next, position < orders.length && compare(orders[position]!, after) === 0 ? position + 1 : position)
    }
    return { orders, next, end: Math.max(next, to), step: 1 }
  }
  let next = to - 1
  if (after !== undefined) next = Math.min(next, lowerBound(orders, after) - 1)
  return { orders, next, end: Math.min(next, from - 1), step: -1 }
}

/** True when a comes strictly before b in the requested order. */
function precedes (a: Position, b: Position, order: 'asc' | 'desc'): boolean {
  const sign = compare(a, b)
  return order === 'asc' ? sign < 0 : sign > 0
}

function matches (order: Order, query: StorageListQuery): boolean {
  const { customerId, statuses, createdFrom, createdTo, after } = query
  return (customerId === undefined || order.customerId === customerId) &&
    (statuses === undefined || statuses.includes(order.status)) &&
    (createdFrom === undefined || order.createdAt >= createdFrom) &&
    (createdTo === undefined || order.createdAt < createdTo) &&
    (after === undefined || precedes(after, order, query.order))
}

/**
 * The embedded default storage: orders live in this process and are gone when it exits.
 * Fine for tests, examples and single-process apps; use a database adapter to keep orders.
 */
export function memoryStorage (): OrderStorage {
  // Two indexes answer every filter: one per status, one per (customer, status). Without a status
  // filter a page merges the walks of every status; there are few, so a page still costs the same
  // at any store size, and each create pays for two index inserts, not four.
  const byId = new Map<string, Order>()
  const byStatus = new Map<string, Order[]>()
  const byCustomerStatus = new Map<string, Order[]>()
  const claims = new Map<string, StoredClaim>()
  // Claims in the order they were made, for purging expired ones; `head` is the oldest unpurged one.
  const claimQueue: string[] = []
  let head = 0

  const indexOf = (map: Map<string, Order[]>, key: string): Order[] => {
    let orders = map.get(key)
    if (orders === undefined) map.set(key, orders = [])
    return orders
  }
  // Statuses never hold a NUL, so the first NUL ends the status and the key is unambiguous.
  const customerStatusKey = (customerId: string, status: string) => `${status}\u0000${customerId}`

  function purgeExpiredClaims (now: string): void {
    while (head < claimQueue.length) {
      const key = claimQueue[head]!
      const claim = claims.get(key)
      if (claim !== undefined && claim.expiresAt > now) break
      if (claim !== undefined) claims.delete(key)
      head++
    }
    if (head > 1024 && head * 2 > claimQueue.length) {
      claimQueue.splice(0, head)
      head = 0
    }
  }

  // The feed: events in the order they were stored, each committed at once. The event at feed
  // position p sits at events[p - base]; purging moves `oldest` forward and compacts now and then.
  const events: OrderEvent[] = []
  const positions = new Map<string, number>()
  let base = 0
  let oldest = 0
  const subscriptions = new Map<string, StoredSubscription>()

  function append (event: OrderEvent): void {
    positions.set(event.id, base + events.length)
    events.push(event)
  }

  function assertNewEvent (event: OrderEvent): void {
    if (positions.has(event.id)) throw new Error(`event id ${event.id} is already stored`)
  }

  /** Up to `limit` events from feed position `from` on. */
  function eventsFrom (from: number, limit: number): OrderEvent[] {
    const start = Math.max(from - base, oldest)
    return events.slice(start, start + limit)
  }

  function create (order: Order, event: OrderEvent, claim?: IdempotencyClaim): CreateResult {
    if (claim !== undefined) {
      purgeExpiredClaims(order.createdAt)
      const stored = claims.get(claim.key)
      if (stored !== undefined && stored.expiresAt > order.createdAt) {
        return { created: false, order: byId.get(stored.orderId)!, fingerprint: stored.fingerprint }
      }
    }
    if (byId.has(order.id)) throw new Error(`order id ${order.id} is already stored`)
    assertNewEvent(event)
    byId.set(order.id, order)
    append(event)
    insert(indexOf(byStatus, order.status), order)
    insert(indexOf(byCustomerStatus, customerStatusKey(order.customerId, order.status)), order)
    if (claim !== undefined) {
      claims.set(claim.key, { fingerprint: claim.fingerprint, orderId: order.id, expiresAt: claim.expiresAt })
      claimQueue.push(claim.key)
    }
    return { created: true, order }
  }

  function list (query: StorageListQuery): Order[] {
    const { customerId, statuses, ids, limit } = query
    if (ids !== undefined) {
      const found: Order[] = []
      for (const id of new Set(ids)) {
        const order = byId.get(id)
        if (order !== undefined && matches(order, query)) found.push(order)
      }
      return found.sort((a, b) => precedes(a, b, query.order) ? -1 : 1).slice(0, limit)
    }
    // Indexes that answer the filter exactly, so no order is read and skipped.
    const wanted = statuses ?? [...byStatus.keys()]
    const indexes = customerId === undefined
      ? wanted.map(status => byStatus.get(status))
      : wanted.map(status => byCustomerStatus.get(customerStatusKey(customerId, status)))

    const runs: Run[] = []
    for (const orders of indexes) {
      if (orders === undefined) continue
      const run = runOf(orders, query)
      if (run.next !== run.end) runs.push(run)
    }
    const page: Order[] = []
    // A merge of the runs' heads; with one run (the common case) it is a plain walk.
    while (page.length < limit && runs.length > 0) {
      let best = runs[0]!
      for (let i = 1; i < runs.length; i++) {
        const run = runs[i]!
        if (precedes(run.orders[run.next]!, best.orders[best.next]!, query.order)) best = run
      }
      page.push(best.orders[best.next]!)
      best.next += best.step
      if (best.next === best.end) runs.splice(runs.indexOf(best), 1)
    }
    return page
  }

  function replace (order: Order, expectedVersion: number, event: OrderEvent): boolean {
    const previous = byId.get(order.id)
    if (previous === undefined || previous.version !== expectedVersion) return false
    assertNewEvent(event)
    byId.set(order.id, order)
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

  function listEvents (after: string | undefined, limit: number): OrderEvent[] | undefined {
    if (after === undefined) return eventsFrom(0, limit)
    const position = positions.get(after)
    return position === undefined ? undefined : eventsFrom(position + 1, limit)
  }

  function purgeEvents (before: string, limit: number): number {
    // Live subscriptions (held after `before`) keep every event they have not handled.
    const heldSince = Date.parse(before)
    let keepFrom = Infinity
    for (const subscription of subscriptions.values()) {
      if (subscription.heldAt > heldSince) keepFrom = Math.min(keepFrom, subscription.position + 1)
    }
    let count = 0
    for (; count < limit && oldest < events.length && base + oldest < keepFrom; count++) {
      const event = events[oldest]!
      if (event.at >= before) break
      positions.delete(event.id)
      oldest++
    }
    if (oldest > 1024 && oldest * 2 > events.length) {
      events.splice(0, oldest)
      base += oldest
      oldest = 0
    }
    return count
  }

  function lease ({ name, holder, ttl, from }: LeaseRequest): Lease {
    const now = Date.now()
    let subscription = subscriptions.get(name)
    if (subscription === undefined) {
      const position = from === 'now' ? base + events.length - 1 : -1
      subscription = { holder: null, expiresAt: 0, heldAt: 0, position, lastEventId: null }
      subscriptions.set(name, subscription)
    }
    const held = subscription.holder === holder || subscription.holder === null || subscription.expiresAt <= now
    if (held) Object.assign(subscription, { holder, expiresAt: now + ttl, heldAt: now })
    return { held, lastEventId: subscription.lastEventId }
  }

  function readSubscription (name: string, limit: number): OrderEvent[] {
    const subscription = subscriptions.get(name)
    // Purging keeps what a live subscription has not handled; one that lapsed resumes at the oldest kept.
    return subscription === undefined ? [] : eventsFrom(subscription.position + 1, limit)
  }

  function checkpoint (name: string, holder: string, lastEventId: string | null, eventId: string): boolean {
    const subscription = subscriptions.get(name)
    const position = positions.get(eventId)
    if (subscription?.holder !== holder || subscription.lastEventId !== lastEventId || position === undefined) return false
    subscription.position = position
    subscription.lastEventId = eventId
    return true
  }

  function release (name: string, holder: string): void {
    const subscription = subscriptions.get(name)
    if (subscription?.holder === holder) Object.assign(subscription, { holder: null, expiresAt: 0 })
  }

  return {
    create: async (order, event, claim) => create(order, event, claim),
    get: async (id) => byId.get(id),
    list: async (query) => list(query),
    replace: async (order, expectedVersion, event) => replace(order, expectedVersion, event),
    listEvents: async ({ after, limit }) => listEvents(after, limit),
    purgeEvents: async (before, limit) => purgeEvents(before, limit),
    lease: async (request) => lease(request),
    readSubscription: async (name, limit) => readSubscription(name, limit),
    checkpoint: async (name, holder, lastEventId, eventId) => checkpoint(name, holder, lastEventId, eventId),
    release: async (name, holder) => release(name, holder)
  }
}
