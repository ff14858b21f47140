// What the conformance cases share: orders as the plugin would store them, and readers that wait for the feed.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { createdEvent, statusChangedEvent, type OrderCreatedEvent, type OrderEvent } from '../../feed/events.js'
import { comparePositions, type OrderPosition } from '../../orders/position.js'
import type { Order } from '../../http/schemas.js'
import type { CreateResult, IdempotencyClaim, StorageListQuery } from '../order-storage.js'
import type { CaseStorage } from './case.js'

export type ListFilter = Omit<StorageListQuery, 'order' | 'after' | 'limit'>

export const DAY = '2026-01-01T10:00:00.000Z'
export const LATER = '2026-01-01T10:00:00.001Z'
export const FAR_FUTURE = '2100-01-01T00:00:00.000Z'
// Several createdAt values, with ties, in one time zone's day and across a year.
export const INSTANTS = [
  '2025-12-31T23:59:59.999Z', DAY, LATER, '2026-01-01T10:00:01.000Z', '2026-01-02T00:00:00.000Z', '2027-06-15T12:30:45.678Z'
]
// Ids whose JS string order differs from most database collations (case, punctuation, digits).
export const TIE_IDS = [
  'ord_a', 'ord_B', 'ord_b', 'ord_A', 'ord_0', 'ord__', 'ord_-', 'ord_a0', 'ord_aa', 'ord_Z', 'ord_z', 'ord_9',
  'ORD_x', 'ord_~', 'ord_.', 'ord_Ab', 'ord_aB', 'ord_bA', 'ord_Ba', 'ord_1', 'ord_10', 'ord_2', 'ord_zz', 'ord_ZZ'
]
export const STATUSES = ['pending', 'paid', 'shipped', 'cancelled']
export const CUSTOMERS = ['cus_a', 'cus_b', 'cus_c']
export const PARALLEL = 8

/**
 * A valid order as the plugin would store it; `fields` override the defaults. Its `number` is 0 until
 * `storeOrder` or `createAll` stores it and sets the number the storage chose.
 */
export function orderOf (fields: Partial<Order> = {}): Order {
  const createdAt = fields.createdAt ?? DAY
  const status = fields.status ?? 'pending'
  return {
    id: `ord_${randomUUID()}`,
    number: 0,
    customerId: 'cus_42',
    status,
    currency: 'EUR',
    items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }],
    total: 2500,
    metadata: {},
    version: 1,
    statusHistory: [{ status, at: createdAt }],
    createdAt,
    updatedAt: createdAt,
    ...fields
  }
}

/** The order after one status change, as the plugin would replace it. */
export function moved (order: Order, status: string, reason = 'conformance'): Order {
  const at = new Date(Date.parse(order.updatedAt) + 1000).toISOString()
  return {
    ...order,
    status,
    version: order.version + 1,
    statusHistory: [...order.statusHistory, { status, at, reason }],
    updatedAt: at
  }
}

/**
 * Stores a copy of `order` without its number, with its created event, as the plugin does; when the
 * storage created it, checks the number it chose and sets it on `order`.
 */
export async function storeOrder (storage: Pick<CaseStorage, 'create'>, order: Order, claim?: IdempotencyClaim): Promise<CreateResult> {
  return storeEvent(storage, createdEvent(order), claim)
}

/** Stores a copy of the event's order without its number, as `storeOrder` does, with a copy of `event`; sets the number on `event.order`. */
export async function storeEvent (storage: Pick<CaseStorage, 'create'>, event: OrderCreatedEvent, claim?: IdempotencyClaim): Promise<CreateResult> {
  const { number: _, ...order } = structuredClone(event.order)
  const given = { ...structuredClone(event), order }
  const before = structuredClone(given)
  const result = await storage.create(order, given, claim)
  assert.deepEqual(given, before, 'create must not change the order or the event it is given: it returns the order it stored')
  if (result.created) {
    assert.ok(Number.isSafeInteger(result.order.number) && result.order.number > 0, `create must return the order with a positive integer number, got ${result.order.number}`)
    event.order.number = result.order.number
  }
  return result
}

/** Replaces `order` with its statusChanged event, from the status of its previous history entry. */
export function replaceOrder (storage: Pick<CaseStorage, 'replace'>, order: Order, expectedVersion: number): Promise<boolean> {
  return storage.replace(order, expectedVersion, statusChangedEvent(order, order.statusHistory.at(-2)?.status ?? order.status))
}

export function claimOf (key: string, fingerprint = 'fingerprint-1', expiresAt = FAR_FUTURE): IdempotencyClaim {
  return { key, fingerprint, expiresAt }
}

export function positionOf (order: Order): OrderPosition {
  return { createdAt: order.createdAt, id: order.id }
}

/** The sign of an order's balance, as `filter.balance` names it: an order stored without a balance owes its total. */
function signOf (order: Order): StorageListQuery['balance'] {
  const owed = (order as Order & { balance?: number }).balance ?? order.total
  return owed > 0 ? 'due' : owed === 0 ? 'settled' : 'owed'
}

/** What a list query must return, computed from the orders the test stored. */
export function expectedList (orders: readonly Order[], query: Omit<StorageListQuery, 'limit'>): string[] {
  const { order: direction, after, statuses, ids, createdFrom, createdTo, balance, ...equal } = query
  const sign = direction === 'asc' ? 1 : -1
  // Every other filter is an order property matched by equality.
  const matched = Object.entries(equal).filter(([, value]) => value !== undefined) as Array<[keyof Order, unknown]>
  return orders
    .filter(order =>
      matched.every(([key, value]) => order[key] === value) &&
      (statuses === undefined || statuses.includes(order.status)) &&
      (ids === undefined || ids.includes(order.id)) &&
      (createdFrom === undefined || order.createdAt >= createdFrom) &&
      (createdTo === undefined || order.createdAt < createdTo) &&
      (balance === undefined || signOf(order) === balance) &&
      (after === undefined || sign * comparePositions(order, after) > 0))
    .sort((a, b) => sign * comparePositions(a, b))
    .map(order => order.id)
}

export function show (query: object): string {
  return JSON.stringify(query)
}

/** Follows pages from the start to the end, as the plugin's cursors do; returns the ids seen. */
export async function walkPages (storage: CaseStorage, query: Omit<StorageListQuery, 'limit' | 'after'>, limit: number, pageBound: number): Promise<string[]> {
  const seen: string[] = []
  let after: OrderPosition | undefined
  for (let pages = 0; pages < pageBound; pages++) {
    const page = await storage.list({ ...query, after, limit })
    assert.ok(page.length <= limit, `list returned ${page.length} orders for limit ${limit}: ${show(query)}`)
    seen.push(...page.map(order => order.id))
    if (page.length < limit) return seen
    after = positionOf(page[page.length - 1]!)
  }
  assert.fail(`a walk with limit ${limit} did not end within ${pageBound} pages (is "after" ignored?): ${show(query)}`)
}

export async function createAll (storage: Pick<CaseStorage, 'create'>, orders: readonly Order[]): Promise<void> {
  for (const order of orders) {
    const result = await storeOrder(storage, order)
    assert.equal(result.created, true, `create of ${order.id} without a claim must store it`)
  }
}

/** 24 orders over 3 customers, 4 statuses and 6 instants (so many share a createdAt), stored out of order. */
export async function seedListOrders (storage: CaseStorage): Promise<Order[]> {
  const orders = TIE_IDS.map((id, i) => orderOf({
    id,
    customerId: CUSTOMERS[i % CUSTOMERS.length],
    status: STATUSES[(i >> 1) % STATUSES.length],
    createdAt: INSTANTS[(i * 5) % INSTANTS.length]
  }))
  // 7 is coprime with 24: a fixed shuffle, so adapters cannot rely on arrival order.
  await createAll(storage, orders.map((_, i) => orders[(i * 7) % orders.length]!))
  return orders
}

export async function assertWalks (storage: CaseStorage, orders: readonly Order[], filters: readonly ListFilter[]): Promise<void> {
  for (const filter of filters) {
    for (const order of ['asc', 'desc'] as const) {
      const query = { ...filter, order }
      const expected = expectedList(orders, query)
      for (const limit of [1, 5, 100]) {
        const seen = await walkPages(storage, query, limit, orders.length + 2)
        assert.deepEqual(seen, expected, `walk with limit ${limit}: ${show(query)}`)
      }
    }
  }
}

export function assertCreated (result: CreateResult, order: Order, what: string): void {
  assert.deepEqual(result, { created: true, order }, `${what} must return { created: true, order }`)
}

// How long a case waits for an event to be listed: a feed may list a change a little after it returns.
const FEED_WAIT = 10_000

/**
 * Calls `read` until `done` says its value will do, as a reader would: a feed may list a change a little
 * after it returns. It waits at most FEED_WAIT for more (a `count` of the value that grows), so that
 * writers still storing on a busy machine are waited for as long as the feed keeps up with them.
 */
export async function poll<T> (what: string, read: () => Promise<T>, done: (value: T) => boolean, count?: (value: T) => number): Promise<T> {
  let deadline = Date.now() + FEED_WAIT
  let counted = 0
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (count !== undefined && count(value) > counted) {
      counted = count(value)
      deadline = Date.now() + FEED_WAIT
    }
    assert.ok(Date.now() < deadline, `${what} within ${FEED_WAIT} ms`)
    await sleep(10)
  }
}

/** Reads the feed after `after`, passing the last id it got, until it has listed `count` events. */
export async function readFeed (storage: CaseStorage, count: number, after?: string, limit = 100): Promise<OrderEvent[]> {
  const seen: OrderEvent[] = []
  return poll(`the feed lists ${count} events`, async () => {
    const from = seen.at(-1)?.id ?? after
    const page = await storage.listEvents({ after: from, limit })
    assert.ok(page !== undefined, `listEvents after ${from} must find the event it just listed`)
    assert.ok(page.length <= limit, `listEvents returned ${page.length} events for limit ${limit}`)
    assert.ok(!page.some(event => event.id === from), 'a page never lists the event named by after')
    seen.push(...page)
    return seen
  }, events => events.length >= count, events => events.length)
}

/** A subscription's next events, once it lists `count` of them. */
export async function readSubscriptionUntil (storage: CaseStorage, name: string, count: number): Promise<OrderEvent[]> {
  return poll(`subscription ${name} lists ${count} events`, () => storage.readSubscription(name, 100), events => events.length >= count)
}

/** Stores one more order and waits until its event is listed; returns every event listed before it. */
export async function feedBeforeSentinel (storage: CaseStorage): Promise<OrderEvent[]> {
  const sentinel = createdEvent(orderOf({ customerId: 'cus_sentinel' }))
  await storeEvent(storage, sentinel)
  const all = await poll('the event of a stored change is listed', () => readAll(storage), events => events.some(event => event.id === sentinel.id))
  return all.slice(0, all.findIndex(event => event.id === sentinel.id))
}

/** Every event listed now, from the oldest. */
export async function readAll (storage: CaseStorage): Promise<OrderEvent[]> {
  const seen: OrderEvent[] = []
  for (;;) {
    const from = seen.at(-1)?.id
    const page = await storage.listEvents({ after: from, limit: 100 })
    assert.ok(page !== undefined, 'listEvents finds the event it just listed')
    assert.ok(!page.some(event => event.id === from), 'a page never lists the event named by after')
    if (page.length === 0) return seen
    seen.push(...page)
  }
}

export const ids = (items: ReadonlyArray<{ id: string }>) => items.map(item => item.id)
