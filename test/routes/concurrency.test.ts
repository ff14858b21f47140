// Concurrent status updates: compare-and-set with re-read and re-check, never a lost or forbidden move.
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { defaultWorkflow, memoryStorage, type Order, type OrderStorage } from '../../lib/index.js'
import { buildApp, createOrder, post, replaceOrder } from '../helper.js'

const allowed = defaultWorkflow.transitions as Record<string, readonly string[]>

function assertConsistentHistory (t: Test, order: Order): void {
  t.equal(order.version, order.statusHistory.length, 'version === statusHistory.length')
  t.equal(order.status, order.statusHistory.at(-1)!.status, 'status is the last history entry')
  for (let i = 1; i < order.statusHistory.length; i++) {
    const from = order.statusHistory[i - 1]!
    const to = order.statusHistory[i]!
    t.ok(allowed[from.status]!.includes(to.status), `${from.status} -> ${to.status} is an allowed move`)
    t.ok(from.at <= to.at, 'history stays in time order')
  }
}

/** A storage whose next `replace` finds that `interfere` (another writer) changed the order first. */
function racingStorage (interfere: (storage: OrderStorage, order: Order) => Promise<void>) {
  const inner = memoryStorage()
  let races = 1
  const storage: OrderStorage = {
    ...inner,
    replace: async (order, expectedVersion, event) => {
      if (races > 0) {
        races--
        const current = (await inner.get(order.id))!
        await interfere(inner, current)
      }
      return inner.replace(order, expectedVersion, event)
    }
  }
  return storage
}

/** What another writer stores: `current` moved to `status`, as the plugin would store it. */
function moved (current: Order, status: string): Order {
  const at = new Date().toISOString()
  return {
    ...current,
    status,
    version: current.version + 1,
    statusHistory: [...current.statusHistory, { status, at }],
    updatedAt: at
  }
}

t.test('concurrent status updates of one order never lose an update nor store a forbidden move', async t => {
  const inner = memoryStorage()
  let lostRaces = 0
  // Reads and writes take a while, as database round trips do, so the updates interleave.
  const roundTrip = () => sleep(Math.random() * 3)
  const storage: OrderStorage = {
    ...inner,
    get: async (id) => { await roundTrip(); return inner.get(id) },
    replace: async (order, expectedVersion, event) => {
      await roundTrip()
      return (await inner.replace(order, expectedVersion, event)) || (lostRaces++, false)
    }
  }
  const app = await buildApp(t, { storage })
  const targets = ['paid', 'cancelled', 'shipped', 'refunded', 'delivered']
  for (let round = 0; round < 5; round++) {
    const order = await createOrder(app)
    const requests = Array.from({ length: 20 }, (_, i) => targets[(i + round) % targets.length]!)
    const responses = await Promise.all(requests.map(status => post(app, 'updateOrderStatus', { id: order.id, status })))
    for (const { status, body } of responses) {
      if (status === 200) continue
      t.equal(status, 409)
      t.equal(body.code, 'ORDER_INVALID_TRANSITION')
    }
    const [stored] = (await app.orders.list({ filter: { ids: [order.id] } })).items
    assertConsistentHistory(t, stored!)
    const succeeded = responses.filter(response => response.status === 200).map(response => response.body as Order)
    const latest = succeeded.reduce((a, b) => a.version >= b.version ? a : b)
    t.same(stored, latest, 'the stored order is the one the last successful update returned')
    for (const body of succeeded) {
      t.same(stored!.statusHistory.slice(0, body.version), body.statusHistory, 'every successful update is in the history')
    }
  }
  t.ok(lostRaces > 0, 'the requests did race')
})

t.test('a lost compare-and-set re-reads the order and rejects a move that became forbidden', async t => {
  const storage = racingStorage(async (inner, current) => { await replaceOrder(inner, moved(current, 'cancelled'), current.version) })
  const app = await buildApp(t, { storage })
  const order = await createOrder(app)
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  t.equal(status, 409)
  t.equal(body.code, 'ORDER_INVALID_TRANSITION')
  const stored = (await storage.get(order.id))!
  t.equal(stored.status, 'cancelled', 'the other writer\'s move stays')
  t.equal(stored.version, 2)
  assertConsistentHistory(t, stored)
})

t.test('a lost compare-and-set to the status the other writer set is a no-op', async t => {
  const storage = racingStorage(async (inner, current) => { await replaceOrder(inner, moved(current, 'paid'), current.version) })
  const app = await buildApp(t, { storage })
  const order = await createOrder(app)
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  t.equal(status, 200)
  t.equal(body.status, 'paid')
  t.equal(body.version, 2, 'one move, not two')
  t.same(await storage.get(order.id), body)
})

t.test('a lost compare-and-set retries the move on the re-read order when it is still allowed', async t => {
  const storage = racingStorage(async (inner, current) => { await replaceOrder(inner, moved(current, 'paid'), current.version) })
  const app = await buildApp(t, { storage })
  const order = await createOrder(app)
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'cancelled', reason: 'customer asked' })
  t.equal(status, 200)
  t.same(body.statusHistory.map((change: { status: string }) => change.status), ['pending', 'paid', 'cancelled'])
  t.equal(body.statusHistory[2].reason, 'customer asked')
  t.equal(body.version, 3)
  assertConsistentHistory(t, (await storage.get(order.id))!)
})

t.test('with expectedVersion a lost race is 409 ORDER_VERSION_CONFLICT and the other writer\'s order stays', async t => {
  const storage = racingStorage(async (inner, current) => { await replaceOrder(inner, moved(current, 'paid'), current.version) })
  const app = await buildApp(t, { storage })
  const order = await createOrder(app)
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'cancelled', expectedVersion: 1 })
  t.equal(status, 409)
  t.equal(body.code, 'ORDER_VERSION_CONFLICT')
  const stored = (await storage.get(order.id))!
  t.equal(stored.status, 'paid')
  t.equal(stored.version, 2)
})

t.test('a storage whose compare-and-set loses while the order stays at its version ends in 409 ORDER_VERSION_CONFLICT, not a loop', async t => {
  const inner = memoryStorage()
  let attempts = 0
  const storage: OrderStorage = { ...inner, replace: async () => { attempts++; return false } }
  const app = await buildApp(t, { storage })
  const order = await createOrder(app)
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  t.equal(status, 409)
  t.equal(body.code, 'ORDER_VERSION_CONFLICT')
  t.equal(attempts, 1, 'the order never moved, so the same write would be refused again: it is not retried')
  t.same(await inner.get(order.id), order, 'nothing changed')
})

t.test('a move that loses the race forty times to writers that make progress lands, never ORDER_VERSION_CONFLICT', async t => {
  const inner = memoryStorage()
  let races = 40
  // Each lost race is another writer's: a metadata edit that moves the version on.
  const storage: OrderStorage = {
    ...inner,
    replace: async (order, expectedVersion, event) => {
      if (races > 0) {
        races--
        const current = (await inner.get(order.id))!
        await replaceOrder(inner, { ...current, version: current.version + 1, metadata: { races: String(races) } }, current.version)
      }
      return inner.replace(order, expectedVersion, event)
    }
  }
  const app = await buildApp(t, { storage })
  const order = await createOrder(app)
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  t.equal(status, 200, 'decided again on the order as now stored, each time')
  t.equal(body.status, 'paid')
  t.equal(body.version, 42, 'after the forty other writes')
  t.same(await inner.get(order.id), body)
})

t.test('concurrent updates through app.orders keep the history consistent too', async t => {
  const app = await buildApp(t)
  const order = await app.orders.create({ customerId: 'c', currency: 'EUR', items: [{ sku: 's', quantity: 1, unitPrice: 1 }] })
  const results = await Promise.allSettled(['paid', 'shipped', 'delivered', 'refunded', 'paid', 'shipped']
    .map(status => app.orders.updateStatus({ id: order.id, status })))
  for (const result of results) {
    if (result.status === 'rejected') t.match(result.reason, { code: 'ORDER_INVALID_TRANSITION' })
  }
  assertConsistentHistory(t, (await app.orders.list()).items[0]!)
})

t.test('a stale expectedVersion is 409 ORDER_VERSION_CONFLICT even when the move would be a no-op', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  const paid = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid', expectedVersion: 1 })
  t.equal(paid.status, 200, 'the current version passes')
  for (const status of ['paid', 'shipped']) {
    const { status: code, body } = await post(app, 'updateOrderStatus', { id: order.id, status, expectedVersion: 1 })
    t.equal(code, 409, status)
    t.equal(body.code, 'ORDER_VERSION_CONFLICT')
  }
  t.same((await app.orders.list()).items, [paid.body], 'nothing changed')
})

t.test('a status-filtered walk loses no order when the order at the cursor changes status', async t => {
  for (const order of ['asc', 'desc'] as const) {
    const app = await buildApp(t)
    for (let i = 0; i < 6; i++) await createOrder(app)
    const expected = (await app.orders.list({ order, limit: 100 })).items.map(listed => listed.id)
    const seen: string[] = []
    let cursor: string | undefined
    do {
      const page = await app.orders.list({ order, limit: 2, filter: { status: 'pending' }, ...(cursor && { cursor }) })
      seen.push(...page.items.map(listed => listed.id))
      // The order the cursor points at leaves the filter before the next page is read.
      if (page.items.length > 0) await app.orders.updateStatus({ id: page.items.at(-1)!.id, status: 'paid' })
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined)
    t.same(seen, expected, `${order}: every pending order once, in order`)
  }
})
