// The storage-adapter conformance suite: what every OrderStorage must do, runnable from any test runner.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { createdEvent, statusChangedEvent, type OrderEvent } from './events.js'
import type { Order } from './schemas.js'
import type { CreateResult, IdempotencyClaim, OrderStorage, StorageListQuery } from './storage/types.js'

/** One named behaviour of OrderStorage, checked against a fresh, initialized storage. */
export interface ConformanceCase {
  name: string
  run: (storage: OrderStorage) => Promise<void>
}

type Position = NonNullable<StorageListQuery['after']>
type ListFilter = Omit<StorageListQuery, 'order' | 'after' | 'limit'>

const DAY = '2026-01-01T10:00:00.000Z'
const LATER = '2026-01-01T10:00:00.001Z'
const FAR_FUTURE = '2100-01-01T00:00:00.000Z'
// Several createdAt values, with ties, in one time zone's day and across a year.
const INSTANTS = [
  '2025-12-31T23:59:59.999Z', DAY, LATER, '2026-01-01T10:00:01.000Z', '2026-01-02T00:00:00.000Z', '2027-06-15T12:30:45.678Z'
]
// Ids whose JS string order differs from most database collations (case, punctuation, digits).
const TIE_IDS = [
  'ord_a', 'ord_B', 'ord_b', 'ord_A', 'ord_0', 'ord__', 'ord_-', 'ord_a0', 'ord_aa', 'ord_Z', 'ord_z', 'ord_9',
  'ORD_x', 'ord_~', 'ord_.', 'ord_Ab', 'ord_aB', 'ord_bA', 'ord_Ba', 'ord_1', 'ord_10', 'ord_2', 'ord_zz', 'ord_ZZ'
]
const STATUSES = ['pending', 'paid', 'shipped', 'cancelled']
const CUSTOMERS = ['cus_a', 'cus_b', 'cus_c']
const PARALLEL = 8

/** A valid order as the plugin would store it; `fields` override the defaults. */
function orderOf (fields: Partial<Order> = {}): Order {
  const createdAt = fields.createdAt ?? DAY
  const status = fields.status ?? 'pending'
  return {
    id: `ord_${randomUUID()}`,
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
function moved (order: Order, status: string, reason = 'conformance'): Order {
  const at = new Date(Date.parse(order.updatedAt) + 1000).toISOString()
  return {
    ...order,
    status,
    version: order.version + 1,
    statusHistory: [...order.statusHistory, { status, at, reason }],
    updatedAt: at
  }
}

/** Stores `order` with its created event, as the plugin does. */
function storeOrder (storage: OrderStorage, order: Order, claim?: IdempotencyClaim): Promise<CreateResult> {
  return storage.create(order, createdEvent(order), claim)
}

/** Replaces `order` with its statusChanged event, from the status of its previous history entry. */
function replaceOrder (storage: OrderStorage, order: Order, expectedVersion: number): Promise<boolean> {
  return storage.replace(order, expectedVersion, statusChangedEvent(order, order.statusHistory.at(-2)?.status ?? order.status))
}

function claimOf (key: string, fingerprint = 'fingerprint-1', expiresAt = FAR_FUTURE): IdempotencyClaim {
  return { key, fingerprint, expiresAt }
}

function positionOf (order: Order): Position {
  return { createdAt: order.createdAt, id: order.id }
}

/** Ascending (createdAt, id) in JS string order, the order every adapter must list in. */
function compare (a: Position, b: Position): number {
  const byCreated = a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0
  return byCreated !== 0 ? byCreated : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/** What a list query must return, computed from the orders the test stored. */
function expectedList (orders: readonly Order[], query: Omit<StorageListQuery, 'limit'>): string[] {
  const sign = query.order === 'asc' ? 1 : -1
  return orders
    .filter(order =>
      (query.customerId === undefined || order.customerId === query.customerId) &&
      (query.statuses === undefined || query.statuses.includes(order.status)) &&
      (query.ids === undefined || query.ids.includes(order.id)) &&
      (query.createdFrom === undefined || order.createdAt >= query.createdFrom) &&
      (query.createdTo === undefined || order.createdAt < query.createdTo) &&
      (query.after === undefined || sign * compare(order, query.after) > 0))
    .sort((a, b) => sign * compare(a, b))
    .map(order => order.id)
}

function show (query: object): string {
  return JSON.stringify(query)
}

/** Follows pages from the start to the end, as the plugin's cursors do; returns the ids seen. */
async function walkPages (storage: OrderStorage, query: Omit<StorageListQuery, 'limit' | 'after'>, limit: number, pageBound: number): Promise<string[]> {
  const seen: string[] = []
  let after: Position | undefined
  for (let pages = 0; pages < pageBound; pages++) {
    const page = await storage.list({ ...query, after, limit })
    assert.ok(page.length <= limit, `list returned ${page.length} orders for limit ${limit}: ${show(query)}`)
    seen.push(...page.map(order => order.id))
    if (page.length < limit) return seen
    after = positionOf(page[page.length - 1]!)
  }
  assert.fail(`a walk with limit ${limit} did not end within ${pageBound} pages (is "after" ignored?): ${show(query)}`)
}

async function createAll (storage: OrderStorage, orders: readonly Order[]): Promise<void> {
  for (const order of orders) {
    const result = await storeOrder(storage, structuredClone(order))
    assert.equal(result.created, true, `create of ${order.id} without a claim must store it`)
  }
}

/** 24 orders over 3 customers, 4 statuses and 6 instants (so many share a createdAt), stored out of order. */
async function seedListOrders (storage: OrderStorage): Promise<Order[]> {
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

async function assertWalks (storage: OrderStorage, orders: readonly Order[], filters: readonly ListFilter[]): Promise<void> {
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

function assertCreated (result: CreateResult, order: Order, what: string): void {
  assert.deepEqual(result, { created: true, order }, `${what} must return { created: true, order }`)
}

// How long a case waits for an event to be listed: a feed may list a change a little after it returns.
const FEED_WAIT = 10_000

/** Calls `read` until `done` says its value will do, as a reader would: a feed may list a change a little after it returns. */
async function poll<T> (what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + FEED_WAIT
  for (;;) {
    const value = await read()
    if (done(value)) return value
    assert.ok(Date.now() < deadline, `${what} within ${FEED_WAIT} ms`)
    await sleep(10)
  }
}

/** Reads the feed after `after`, passing the last id it got, until it has listed `count` events. */
async function readFeed (storage: OrderStorage, count: number, after?: string, limit = 100): Promise<OrderEvent[]> {
  const seen: OrderEvent[] = []
  return poll(`the feed lists ${count} events`, async () => {
    const from = seen.at(-1)?.id ?? after
    const page = await storage.listEvents({ after: from, limit })
    assert.ok(page !== undefined, `listEvents after ${from} must find the event it just listed`)
    assert.ok(page.length <= limit, `listEvents returned ${page.length} events for limit ${limit}`)
    assert.ok(!page.some(event => event.id === from), 'a page never lists the event named by after')
    seen.push(...page)
    return seen
  }, events => events.length >= count)
}

/** A subscription's next events, once it lists `count` of them. */
async function readSubscriptionUntil (storage: OrderStorage, name: string, count: number): Promise<OrderEvent[]> {
  return poll(`subscription ${name} lists ${count} events`, () => storage.readSubscription(name, 100), events => events.length >= count)
}

/** Stores one more order and waits until its event is listed; returns every event listed before it. */
async function feedBeforeSentinel (storage: OrderStorage): Promise<OrderEvent[]> {
  const sentinel = createdEvent(orderOf({ customerId: 'cus_sentinel' }))
  await storage.create(sentinel.order, sentinel)
  const all = await poll('the event of a stored change is listed', () => readAll(storage), events => events.some(event => event.id === sentinel.id))
  return all.slice(0, all.findIndex(event => event.id === sentinel.id))
}

/** Every event listed now, from the oldest. */
async function readAll (storage: OrderStorage): Promise<OrderEvent[]> {
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

const ids = (events: readonly OrderEvent[]) => events.map(event => event.id)

export const conformanceCases: readonly ConformanceCase[] = Object.freeze([
  {
    name: 'required methods exist',
    async run (storage) {
      const methods = [
        'create', 'get', 'list', 'replace', 'listEvents', 'purgeEvents', 'lease', 'readSubscription', 'checkpoint', 'release'
      ] as const
      for (const method of methods) {
        assert.equal(typeof storage[method], 'function', `storage.${method} must be a function`)
      }
      assert.ok(['undefined', 'function'].includes(typeof storage.init), 'storage.init must be a function when present')
    }
  },
  {
    name: 'get returns the created order unchanged',
    async run (storage) {
      const plain = orderOf({ createdAt: '2026-03-04T05:06:07.089Z' })
      const rich = orderOf({
        customerId: 'cus_ünïcødé ✓ "quoted" \\ \'single\'',
        currency: 'JPY',
        items: [
          { sku: 'A-1', name: 'Mug 😀', quantity: 9000, unitPrice: 1e12 },
          { sku: 'B-2', quantity: 1, unitPrice: 0 }
        ],
        // Above 2^32 and near Number.MAX_SAFE_INTEGER: a 32-bit column or a float would change it.
        total: 9000 * 1e12,
        // Keys that are special to JavaScript objects are data like any other.
        metadata: JSON.parse('{"__proto__":"x","constructor":"y","channel":"web","empty":""}'),
        status: 'shipped',
        version: 3,
        statusHistory: [
          { status: 'pending', at: '2026-03-04T05:06:07.089Z' },
          { status: 'paid', at: '2026-03-04T05:06:08.000Z', reason: 'card ✓' },
          { status: 'shipped', at: '2026-03-04T05:06:09.000Z' }
        ],
        createdAt: '2026-03-04T05:06:07.089Z',
        updatedAt: '2026-03-04T05:06:09.000Z'
      })
      for (const order of [plain, rich]) {
        assertCreated(await storeOrder(storage, structuredClone(order)), order, 'create')
        assert.deepEqual(await storage.get(order.id), order, 'get must return the order as created, timestamps as the same ISO strings')
      }
    }
  },
  {
    name: 'get of an unknown id returns undefined',
    async run (storage) {
      await createAll(storage, [orderOf()])
      assert.equal(await storage.get('ord_unknown'), undefined)
      assert.equal(await storage.get(''), undefined)
    }
  },
  {
    name: 'a claimed idempotency key returns the first order and its fingerprint',
    async run (storage) {
      const first = orderOf()
      const second = orderOf({ createdAt: LATER })
      assertCreated(await storeOrder(storage, structuredClone(first), claimOf('key-1', 'fingerprint-1')), first, 'the first create with a key')
      const replay = await storeOrder(storage, structuredClone(second), claimOf('key-1', 'fingerprint-2'))
      assert.deepEqual(replay, { created: false, order: first, fingerprint: 'fingerprint-1' },
        'a create with a claimed key must return the first order and the first fingerprint')
      assert.equal(await storage.get(second.id), undefined, 'a create with a claimed key must store nothing')
      const other = orderOf({ createdAt: LATER })
      assertCreated(await storeOrder(storage, structuredClone(other), claimOf('key-2', 'fingerprint-1')), other, 'a create with another key')
    }
  },
  {
    name: 'parallel creates with one idempotency key store exactly one order',
    async run (storage) {
      const orders = Array.from({ length: PARALLEL }, () => orderOf())
      const results = await Promise.all(orders.map((order, i) =>
        storeOrder(storage, structuredClone(order), claimOf('key-parallel', `fingerprint-${i}`))))
      const winners = results.flatMap((result, i) => result.created ? [i] : [])
      assert.equal(winners.length, 1, `exactly one of ${PARALLEL} parallel creates with one key must store its order`)
      const winner = winners[0]!
      for (const result of results) {
        if (result.created || 'inProgress' in result) continue
        assert.deepEqual(result, { created: false, order: orders[winner], fingerprint: `fingerprint-${winner}` },
          'every other parallel create must return the stored order and its fingerprint (or inProgress)')
      }
      const stored = await storage.list({ ids: orders.map(order => order.id), order: 'asc', limit: PARALLEL + 1 })
      assert.deepEqual(stored, [orders[winner]], 'only the winning order is stored')
      // Once the winner has returned, its order is readable under the key.
      const again = await storeOrder(storage, orderOf(), claimOf('key-parallel', 'fingerprint-again'))
      assert.deepEqual(again, { created: false, order: orders[winner], fingerprint: `fingerprint-${winner}` })
    }
  },
  {
    name: 'an expired idempotency claim frees its key',
    async run (storage) {
      const first = orderOf({ createdAt: DAY })
      await storeOrder(storage, structuredClone(first), claimOf('key-ttl', 'fingerprint-1', LATER))
      const early = orderOf({ createdAt: DAY })
      assert.deepEqual(await storeOrder(storage, structuredClone(early), claimOf('key-ttl', 'fingerprint-2', FAR_FUTURE)),
        { created: false, order: first, fingerprint: 'fingerprint-1' }, 'a claim expiring after createdAt still holds')
      // expiresAt equal to the new order's createdAt counts as expired.
      const second = orderOf({ createdAt: LATER })
      assertCreated(await storeOrder(storage, structuredClone(second), claimOf('key-ttl', 'fingerprint-2', FAR_FUTURE)), second,
        'a create whose createdAt is at or after the claim\'s expiresAt')
      const third = orderOf({ createdAt: INSTANTS[5] })
      assert.deepEqual(await storeOrder(storage, structuredClone(third), claimOf('key-ttl', 'fingerprint-3')),
        { created: false, order: second, fingerprint: 'fingerprint-2' }, 'the key now belongs to the new order')
      assert.deepEqual(await storage.get(first.id), first, 'expiry frees the key, never the order')
    }
  },
  {
    name: 'replace stores the order when the expected version is current',
    async run (storage) {
      const order = orderOf()
      const bystander = orderOf()
      await createAll(storage, [order, bystander])
      const paid = moved(order, 'paid')
      assert.equal(await replaceOrder(storage, structuredClone(paid), 1), true)
      assert.deepEqual(await storage.get(order.id), paid)
      const shipped = moved(paid, 'shipped')
      assert.equal(await replaceOrder(storage, structuredClone(shipped), 2), true)
      assert.deepEqual(await storage.get(order.id), shipped)
      // A replace may keep the status: the whole order is replaced all the same.
      const annotated = { ...shipped, version: 4, metadata: { note: 'kept status' }, updatedAt: FAR_FUTURE }
      assert.equal(await replaceOrder(storage, structuredClone(annotated), 3), true)
      assert.deepEqual(await storage.get(order.id), annotated)
      assert.deepEqual(await storage.list({ statuses: ['shipped'], order: 'asc', limit: 10 }), [annotated])
      assert.deepEqual(await storage.get(bystander.id), bystander, 'replace touches only the order with that id')
    }
  },
  {
    name: 'replace with a stale expected version changes nothing',
    async run (storage) {
      const order = orderOf()
      await createAll(storage, [order])
      assert.equal(await replaceOrder(storage, moved(order, 'paid'), 2), false, 'a version ahead of the stored one')
      assert.deepEqual(await storage.get(order.id), order)
      const paid = moved(order, 'paid')
      await replaceOrder(storage, structuredClone(paid), 1)
      assert.equal(await replaceOrder(storage, moved(order, 'cancelled'), 1), false, 'a version behind the stored one')
      assert.deepEqual(await storage.get(order.id), paid)
      assert.equal(await replaceOrder(storage, orderOf({ id: 'ord_unknown' }), 1), false, 'an unknown id')
      assert.equal(await storage.get('ord_unknown'), undefined, 'replace never creates an order')
    }
  },
  {
    name: 'parallel replaces from one version: exactly one wins',
    async run (storage) {
      const order = orderOf()
      await createAll(storage, [order])
      const candidates = Array.from({ length: PARALLEL }, (_, i) => moved(order, i % 2 === 0 ? 'paid' : 'cancelled', `writer ${i}`))
      const results = await Promise.all(candidates.map(candidate => replaceOrder(storage, structuredClone(candidate), 1)))
      const winners = results.flatMap((replaced, i) => replaced ? [i] : [])
      assert.equal(winners.length, 1, `exactly one of ${PARALLEL} parallel replaces from version 1 must win`)
      assert.deepEqual(await storage.get(order.id), candidates[winners[0]!], 'the stored order is the winner\'s')
    }
  },
  {
    name: 'list walks all orders by (createdAt, id) in both orders',
    async run (storage) {
      const orders = await seedListOrders(storage)
      await assertWalks(storage, orders, [{}])
      const pages = await storage.list({ order: 'desc', limit: 1000 })
      assert.deepEqual(pages, expectedList(orders, { order: 'desc' }).map(id => orders.find(order => order.id === id)),
        'list returns whole orders')
    }
  },
  {
    name: 'list applies every filter, alone and combined',
    async run (storage) {
      const orders = await seedListOrders(storage)
      const someIds = ['ord_a', 'ord_B', 'ord_Z', 'ord_zz', 'ord_10', 'ord__', 'ord_unknown']
      await assertWalks(storage, orders, [
        { customerId: 'cus_a' },
        { customerId: 'cus_unknown' },
        { statuses: ['paid'] },
        { statuses: ['shipped', 'pending'] },
        { statuses: ['refunded'] },
        { ids: someIds },
        { ids: ['ord_unknown'] },
        { createdFrom: DAY },
        { createdTo: INSTANTS[3] },
        { createdFrom: DAY, createdTo: INSTANTS[4] },
        { createdFrom: INSTANTS[3], createdTo: INSTANTS[3] },
        { customerId: 'cus_b', statuses: ['pending', 'paid'] },
        { customerId: 'cus_c', statuses: ['cancelled', 'shipped'], createdFrom: LATER, createdTo: INSTANTS[5] },
        { ids: someIds, statuses: ['pending', 'cancelled'] },
        { ids: someIds, customerId: 'cus_a', createdFrom: DAY }
      ])
    }
  },
  {
    name: 'list starts strictly after the given position',
    async run (storage) {
      const orders = await seedListOrders(storage)
      const positions: Position[] = [
        ...orders.slice(0, 6).map(positionOf),
        { createdAt: DAY, id: '' },
        { createdAt: DAY, id: 'ord_unknown' },
        { createdAt: '2000-01-01T00:00:00.000Z', id: 'ord_a' },
        { createdAt: FAR_FUTURE, id: 'ord_a' }
      ]
      const filters: ListFilter[] = [{}, { statuses: ['paid', 'pending'] }, { customerId: 'cus_b' }, { ids: TIE_IDS.slice(0, 12) }]
      for (const after of positions) {
        for (const filter of filters) {
          for (const order of ['asc', 'desc'] as const) {
            const query = { ...filter, order, after }
            const page = await storage.list({ ...query, limit: 100 })
            assert.deepEqual(page.map(found => found.id), expectedList(orders, query), show(query))
          }
        }
      }
    }
  },
  {
    name: 'list returns at most limit orders',
    async run (storage) {
      const orders = await seedListOrders(storage)
      for (const limit of [1, 2, 23, 24, 25]) {
        const page = await storage.list({ order: 'asc', limit })
        assert.deepEqual(page.map(order => order.id), expectedList(orders, { order: 'asc' }).slice(0, limit), `limit ${limit}`)
      }
    }
  },
  {
    name: 'a walk visits each order once while orders are created',
    async run (storage) {
      const orders = await seedListOrders(storage)
      for (const order of ['asc', 'desc'] as const) {
        const seen: string[] = []
        let after: Position | undefined
        for (let pages = 0; pages <= TIE_IDS.length; pages++) {
          const page = await storage.list({ order, after, limit: 4 })
          seen.push(...page.map(found => found.id))
          if (page.length < 4) break
          after = positionOf(page[page.length - 1]!)
          // Newer than every seeded order, and one tied with the cursor position itself.
          const arrivals = [orderOf({ createdAt: FAR_FUTURE }), orderOf({ createdAt: after.createdAt, customerId: 'cus_new' })]
          orders.push(...arrivals)
          await createAll(storage, arrivals)
        }
        assert.equal(new Set(seen).size, seen.length, `no order is visited twice (${order})`)
        const seeded = TIE_IDS.filter(id => !seen.includes(id))
        assert.deepEqual(seeded, [], `every order stored before the walk is visited (${order})`)
        assert.deepEqual(seen, [...seen].sort((a, b) =>
          (order === 'asc' ? 1 : -1) * compare(orders.find(found => found.id === a)!, orders.find(found => found.id === b)!)),
        `the walk is in ${order} order`)
      }
    }
  },
  {
    name: 'list reflects status changes made by replace',
    async run (storage) {
      let orders = Array.from({ length: 8 }, (_, i) => orderOf({ customerId: CUSTOMERS[i % 2], createdAt: INSTANTS[i % 3] }))
      await createAll(storage, orders)
      const changes: Array<[number, string]> = [[0, 'paid'], [1, 'paid'], [2, 'cancelled'], [5, 'paid'], [0, 'shipped'], [5, 'refunded']]
      for (const [index, status] of changes) {
        const next = moved(orders[index]!, status)
        assert.equal(await replaceOrder(storage, structuredClone(next), next.version - 1), true)
        orders = orders.map(order => order.id === next.id ? next : order)
        await assertWalks(storage, orders, [
          { statuses: [status] },
          { statuses: ['pending'] },
          { statuses: ['paid', 'shipped'] },
          { customerId: CUSTOMERS[0], statuses: ['paid'] },
          { customerId: CUSTOMERS[1], statuses: ['pending', 'refunded'] },
          { ids: orders.slice(0, 4).map(order => order.id), statuses: [status] }
        ])
      }
      const pages = await storage.list({ statuses: ['shipped'], order: 'asc', limit: 10 })
      assert.deepEqual(pages, [orders[0]], 'list returns the replaced order, not the old one')
    }
  },
  {
    name: 'every stored change is listed with its event, in feed order',
    async run (storage) {
      const first = createdEvent(orderOf())
      const second = createdEvent(orderOf({ createdAt: LATER }))
      assertCreated(await storage.create(structuredClone(first.order), structuredClone(first)), first.order, 'create')
      assertCreated(await storage.create(structuredClone(second.order), structuredClone(second)), second.order, 'create')
      const paid = statusChangedEvent(moved(first.order, 'paid'), 'pending')
      assert.equal(await storage.replace(structuredClone(paid.order), 1, structuredClone(paid)), true)
      const feed = await readFeed(storage, 3)
      assert.deepEqual(feed, [first, second, paid], 'listEvents returns the events as given, in the order they were stored')
      assert.deepEqual(await readFeed(storage, 2, first.id), [second, paid], 'after an id, the page starts with the next event')
      assert.deepEqual(await storage.listEvents({ after: first.id, limit: 1 }), [second], 'at most limit events')
      assert.deepEqual(await storage.listEvents({ after: paid.id, limit: 10 }), [], 'after the newest event, an empty page')
    }
  },
  {
    name: 'a change that stores nothing stores no event',
    async run (storage) {
      const order = orderOf()
      const created = createdEvent(order)
      await storage.create(structuredClone(order), created, claimOf('key-events'))
      const replay = await storage.create(orderOf(), createdEvent(orderOf()), claimOf('key-events'))
      assert.equal(replay.created, false, 'a create with a claimed key stores nothing')
      const stale = statusChangedEvent(moved(order, 'paid'), 'pending')
      assert.equal(await storage.replace(stale.order, 2, stale), false, 'a replace with a stale version stores nothing')
      const unknown = statusChangedEvent(orderOf({ id: 'ord_unknown', version: 2 }), 'pending')
      assert.equal(await storage.replace(unknown.order, 1, unknown), false, 'a replace of an unknown order stores nothing')
      assert.deepEqual(ids(await feedBeforeSentinel(storage)), [created.id], 'only the change that was stored has an event')
    }
  },
  {
    name: 'a change whose event cannot be stored is not stored either',
    async run (storage) {
      const first = createdEvent(orderOf())
      await storage.create(first.order, first)
      // An event id already in the feed: the event insert fails, and the change with it.
      const order = orderOf()
      await assert.rejects(storage.create(order, { ...createdEvent(order), id: first.id }), 'a create whose event id is taken rejects')
      assert.equal(await storage.get(order.id), undefined, 'and stores no order')
      const keyed = orderOf()
      await assert.rejects(storage.create(keyed, { ...createdEvent(keyed), id: first.id }, claimOf('key-atomic')),
        'a claimed create whose event id is taken rejects')
      assert.equal(await storage.get(keyed.id), undefined, 'and stores no order')
      const retried = orderOf()
      assertCreated(await storage.create(retried, createdEvent(retried), claimOf('key-atomic')), retried, 'and claims no key')
      const paid = moved(first.order, 'paid')
      await assert.rejects(storage.replace(paid, 1, { ...statusChangedEvent(paid, 'pending'), id: first.id }),
        'a replace whose event id is taken rejects')
      assert.deepEqual(await storage.get(first.order.id), first.order, 'and leaves the order as it was')
      assert.equal((await feedBeforeSentinel(storage)).length, 2, 'the feed holds the events of the two stored changes only')
    }
  },
  {
    name: 'listEvents after an id that is not in the feed lists undefined',
    async run (storage) {
      const event = createdEvent(orderOf())
      await storage.create(event.order, event)
      await readFeed(storage, 1)
      assert.equal(await storage.listEvents({ after: randomUUID(), limit: 10 }), undefined)
    }
  },
  {
    name: 'a reader passing the last id sees every event once while parallel writers store',
    async run (storage) {
      const written: OrderEvent[] = []
      const writer = async (index: number) => {
        for (let round = 0; round < 6; round++) {
          const created = createdEvent(orderOf({ customerId: `cus_writer_${index}` }))
          await storage.create(created.order, created)
          const paid = statusChangedEvent(moved(created.order, 'paid'), 'pending')
          await storage.replace(paid.order, 1, paid)
          written.push(created, paid)
        }
      }
      const total = PARALLEL * 6 * 2
      const [seen] = await Promise.all([
        readFeed(storage, total, undefined, 7),
        Promise.all(Array.from({ length: PARALLEL }, (_, index) => writer(index)))
      ])
      assert.equal(seen.length, total, 'exactly one event per stored change')
      assert.equal(new Set(ids(seen)).size, total, 'no event is listed twice')
      assert.deepEqual(new Set(ids(seen)), new Set(ids(written)), 'every stored change is listed')
      const versions = new Map<string, number>()
      for (const event of seen) {
        assert.equal(event.order.version, (versions.get(event.order.id) ?? 0) + 1, 'events of one order are listed in version order')
        versions.set(event.order.id, event.order.version)
      }
    }
  },
  {
    name: 'events keep every string the order holds',
    async run (storage) {
      // PostgreSQL's jsonb would refuse these; the order document keeps them, so the event must too.
      const order = orderOf({ customerId: 'cus \u0000 \ud800 "quoted" é 🛒', metadata: { note: 'nul \u0000 lone \udfff' } })
      const event = createdEvent(order)
      await storage.create(structuredClone(order), structuredClone(event))
      assert.deepEqual(await readFeed(storage, 1), [event])
    }
  },
  {
    name: 'purgeEvents deletes the oldest expired events a bounded batch at a time',
    async run (storage) {
      const events = Array.from({ length: 5 }, (_, i) => createdEvent(orderOf({ createdAt: INSTANTS[i] })))
      for (const event of events) await storage.create(event.order, event)
      await readFeed(storage, 5)
      assert.equal(await storage.purgeEvents(INSTANTS[0]!, 10), 0, 'no event is older than the cutoff')
      assert.equal(await storage.purgeEvents(FAR_FUTURE, 2), 2, 'at most limit events')
      assert.equal(await storage.listEvents({ after: events[1]!.id, limit: 10 }), undefined, 'a purged id names no event')
      assert.deepEqual(ids(await readAll(storage)), ids(events.slice(2)), 'the oldest went first')
      assert.equal(await storage.purgeEvents(INSTANTS[3]!, 10), 1, 'only events stored before the cutoff')
      assert.deepEqual(ids(await readAll(storage)), ids(events.slice(3)))
    }
  },
  {
    name: 'purgeEvents keeps what a live subscription has not handled',
    async run (storage) {
      const events = Array.from({ length: 4 }, () => createdEvent(orderOf()))
      for (const event of events) await storage.create(event.order, event)
      await readFeed(storage, 4)
      assert.equal((await storage.lease({ name: 'keeper', holder: 'h1', ttl: 60_000, from: 'start' })).held, true)
      assert.equal(await storage.checkpoint('keeper', 'h1', null, events[0]!.id), true)
      // Events are from 2026-01-01; the lease was held after this cutoff, so the subscription is live.
      const cutoff = new Date(Date.now() - 60_000).toISOString()
      assert.equal(await storage.purgeEvents(cutoff, 10), 1, 'only the event the subscription handled')
      assert.deepEqual(ids(await readAll(storage)), ids(events.slice(1)))
      await storage.release('keeper', 'h1')
      assert.equal(await storage.purgeEvents(cutoff, 10), 0, 'a released subscription is live until retention passes')
      assert.equal(await storage.purgeEvents(FAR_FUTURE, 10), 3, 'one not held since the cutoff holds nothing back')
    }
  },
  {
    name: 'a subscription from start reads from the oldest event, one from now only what comes later',
    async run (storage) {
      const before = createdEvent(orderOf())
      await storage.create(before.order, before)
      await readFeed(storage, 1)
      assert.deepEqual(await storage.lease({ name: 'from-start', holder: 'h', ttl: 60_000, from: 'start' }), { held: true, lastEventId: null })
      assert.deepEqual(await storage.lease({ name: 'from-now', holder: 'h', ttl: 60_000, from: 'now' }), { held: true, lastEventId: null })
      assert.deepEqual(await storage.readSubscription('from-now', 10), [], 'nothing stored before a now subscription starts')
      const after = createdEvent(orderOf())
      await storage.create(after.order, after)
      assert.deepEqual(await readSubscriptionUntil(storage, 'from-now', 1), [after])
      assert.deepEqual(await readSubscriptionUntil(storage, 'from-start', 2), [before, after])
      assert.deepEqual(await storage.lease({ name: 'from-now', holder: 'h', ttl: 60_000, from: 'start' }), { held: true, lastEventId: null },
        'from applies only when the subscription is created')
      assert.deepEqual(await storage.readSubscription('from-now', 10), [after])
      assert.deepEqual(await storage.readSubscription('unknown', 10), [], 'a subscription never leased reads nothing')
    }
  },
  {
    name: 'checkpoint is a compare-and-set on the holder and the last event',
    async run (storage) {
      const events = [createdEvent(orderOf()), createdEvent(orderOf())]
      for (const event of events) await storage.create(event.order, event)
      await readFeed(storage, 2)
      const [first, second] = events as [OrderEvent, OrderEvent]
      await storage.lease({ name: 'cas', holder: 'h1', ttl: 60_000, from: 'start' })
      assert.equal(await storage.checkpoint('cas', 'h2', null, first.id), false, 'another holder cannot move it')
      assert.equal(await storage.checkpoint('cas', 'h1', second.id, first.id), false, 'a stale last event cannot move it')
      assert.equal(await storage.checkpoint('other', 'h1', null, first.id), false, 'an unknown subscription')
      assert.equal(await storage.checkpoint('cas', 'h1', null, first.id), true)
      assert.deepEqual(await storage.readSubscription('cas', 10), [second], 'reading resumes after the checkpoint')
      assert.equal(await storage.checkpoint('cas', 'h1', null, second.id), false, 'the checkpoint moved on')
      assert.deepEqual(await storage.lease({ name: 'cas', holder: 'h1', ttl: 60_000, from: 'start' }), { held: true, lastEventId: first.id })
      assert.equal(await storage.checkpoint('cas', 'h1', first.id, second.id), true)
      assert.deepEqual(await storage.readSubscription('cas', 10), [])
    }
  },
  {
    name: 'a lease is held by one holder until it lapses or is released',
    async run (storage) {
      const event = createdEvent(orderOf())
      await storage.create(event.order, event)
      await readFeed(storage, 1)
      assert.deepEqual(await storage.lease({ name: 'lease', holder: 'h1', ttl: 60_000, from: 'start' }), { held: true, lastEventId: null })
      await storage.checkpoint('lease', 'h1', null, event.id)
      assert.deepEqual(await storage.lease({ name: 'lease', holder: 'h2', ttl: 60_000, from: 'start' }), { held: false, lastEventId: event.id },
        'another holder is refused, and told the checkpoint')
      await storage.release('lease', 'h2')
      assert.equal((await storage.lease({ name: 'lease', holder: 'h2', ttl: 60_000, from: 'start' })).held, false, 'only the holder releases')
      await storage.release('lease', 'h1')
      assert.equal((await storage.lease({ name: 'lease', holder: 'h2', ttl: 200, from: 'start' })).held, true, 'a released lease is taken at once')
      assert.equal((await storage.lease({ name: 'lease', holder: 'h1', ttl: 200, from: 'start' })).held, false)
      await sleep(400)
      assert.equal((await storage.lease({ name: 'lease', holder: 'h1', ttl: 60_000, from: 'start' })).held, true, 'a lapsed lease is taken over')
      const next = createdEvent(orderOf())
      await storage.create(next.order, next)
      await readFeed(storage, 1, event.id)
      assert.equal(await storage.checkpoint('lease', 'h2', event.id, next.id), false, 'the holder that lost the lease cannot checkpoint')
      assert.equal(await storage.checkpoint('lease', 'h1', event.id, next.id), true)
    }
  },
  {
    name: 'custom fields round-trip exactly through create, get, list and replace',
    async run (storage) {
      // Any JSON the host's schemas allow, on the order and on each item (see the customFields option).
      const customFields = {
        address: { name: 'Zoë Ångström 😀 שלום', lines: ['12 rue de la Paix', 'Bâtiment « B »'], city: 'Zürich', country: 'CH' },
        // Floats keep every digit, and integers up to Number.MAX_SAFE_INTEGER stay exact.
        weightKg: 0.1 + 0.2,
        grams: Number.MAX_SAFE_INTEGER,
        tiny: 5e-324,
        huge: 1.7976931348623157e308,
        negative: -1.5e-7,
        insured: false,
        express: true,
        tags: ['fragile', '', 'ünïcødé ✓ "quoted" \\ \'single\''],
        parcels: [{ ref: 'p-1', sizes: [10, 20.5, 0] }, {}],
        nothing: null,
        empty: {},
        // NUL, a lone surrogate and a line break: a json column keeps them, jsonb would refuse the first two.
        note: '\u0000 \ud800 line\nbreak'
      }
      const items = [
        { sku: 'A-1', quantity: 1, unitPrice: 100, customFields: { giftNote: 'Happy birthday 🎂', wrapped: true } },
        { sku: 'B-2', quantity: 2, unitPrice: 0, customFields: {} }
      ]
      const order = { ...orderOf({ items, total: 100 }), customFields }
      assertCreated(await storeOrder(storage, structuredClone(order)), order, 'create of an order with custom fields')
      assert.deepEqual(await storage.get(order.id), order, 'get must return custom fields exactly as created')
      assert.deepEqual(await storage.list({ ids: [order.id], order: 'asc', limit: 5 }), [order], 'list must return them exactly too')
      const { nothing, ...kept } = customFields
      const shipped = { ...moved(order, 'shipped'), customFields: { ...kept, trackingNumber: 'TRK-1', insured: true } }
      assert.equal(await replaceOrder(storage, structuredClone(shipped), 1), true)
      assert.deepEqual(await storage.get(order.id), shipped, 'replace stores the new custom fields, keys removed included')
      assert.deepEqual(await storage.list({ statuses: ['shipped'], order: 'desc', limit: 5 }), [shipped])
    }
  }
])

/**
 * Runs every conformance case (but those named in `skip`) in turn, each on a fresh storage from
 * `factory` after its `init`; rejects with an AggregateError naming every failed case.
 */
export async function runConformance (
  factory: () => OrderStorage | Promise<OrderStorage>,
  options: { skip?: string[] } = {}
): Promise<void> {
  const skip = new Set(options.skip)
  const unknown = [...skip].filter(name => !conformanceCases.some(conformanceCase => conformanceCase.name === name))
  if (unknown.length > 0) {
    throw new TypeError(`runConformance: no conformance case is named ${unknown.map(name => JSON.stringify(name)).join(', ')}`)
  }
  const failed: string[] = []
  const failures: Error[] = []
  const ran = conformanceCases.filter(conformanceCase => !skip.has(conformanceCase.name))
  for (const { name, run } of ran) {
    try {
      const storage = await factory()
      await storage.init?.()
      await run(storage)
    } catch (err) {
      failed.push(JSON.stringify(name))
      failures.push(new Error(`${name}: ${err instanceof Error ? err.message : String(err)}`, { cause: err }))
    }
  }
  if (failures.length > 0) {
    throw new AggregateError(failures, `${failures.length} of ${ran.length} storage conformance cases failed: ${failed.join(', ')}`)
  }
}
