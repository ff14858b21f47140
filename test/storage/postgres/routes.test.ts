import { createServer } from 'node:net'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import t from 'tap'
import { defaultWorkflow, memoryStorage, type ListOrdersQuery, type Order } from '../../../lib/index.js'
import { postgresStorage, type PostgresClient } from '../../../lib/storage/postgres/postgres-storage.js'
import type { OrderStorage } from '../../../lib/storage/order-storage.js'
import { buildApp, createOrder, orderBody, post, storeOrder } from '../../helper.js'
import { testDatabase } from '../../postgres-helper.js'

const db = await testDatabase(t)

/** A storage on a table of its own, not yet initialised: the plugin creates its tables at register. */
const freshStorage = (client: PostgresClient = db.client) => postgresStorage({ client, table: db.freshTable() })

async function countOrders (storage: OrderStorage): Promise<number> {
  let count = 0
  let after: { createdAt: string, id: string } | undefined
  for (;;) {
    const page = await storage.list({ order: 'asc', after, limit: 100 })
    count += page.length
    if (page.length < 100) return count
    after = page[page.length - 1]
  }
}

/** Every order a walk of getOrderList visits, following nextCursor to the end. */
async function walk (app: FastifyInstance, query: ListOrdersQuery, between?: () => Promise<unknown>): Promise<string[]> {
  const ids: string[] = []
  let cursor: string | undefined
  do {
    const { status, body } = await post(app, 'getOrderList', cursor === undefined ? query : { ...query, cursor })
    if (status !== 200) throw new Error(`getOrderList answered ${status}: ${JSON.stringify(body)}`)
    ids.push(...body.items.map((order: Order) => order.id))
    cursor = body.nextCursor ?? undefined
    await between?.()
  } while (cursor !== undefined)
  return ids
}

t.test('the plugin creates its tables at register and serves creates and idempotent replays from PostgreSQL', async t => {
  const storage = freshStorage()
  const app = await buildApp(t, { storage })
  const key = { 'idempotency-key': 'order-2026-0001' }
  const first = await post(app, 'createOrder', orderBody(), key)
  t.equal(first.status, 201)
  t.equal(first.headers['idempotent-replayed'], undefined)
  t.same(await storage.get(first.body.id), first.body, 'stored as answered')

  const replay = await post(app, 'createOrder', orderBody(), key)
  t.equal(replay.status, 201)
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.same(replay.body, first.body)

  const reuse = await post(app, 'createOrder', orderBody({ currency: 'USD' }), key)
  t.equal(reuse.status, 422)
  t.equal(reuse.body.code, 'ORDER_IDEMPOTENCY_KEY_REUSED')
  t.equal(await countOrders(storage), 1)

  const scoped = await buildApp(t, { storage, authorize: () => ({ customerId: 'cus_42' }) })
  const underScope = await post(scoped, 'createOrder', orderBody(), key)
  t.equal(underScope.status, 201)
  t.not(underScope.body.id, first.body.id, 'keys are scoped by the caller\'s scope')
})

t.test('getOrderList over PostgreSQL pages exactly as the memory storage does, for every filter and both orders', async t => {
  const memory = memoryStorage()
  const storage = freshStorage()
  const app = await buildApp(t, { storage })
  const reference = await buildApp(t, { storage: memory })
  const statuses = ['pending', 'paid', 'shipped', 'cancelled']
  const ids = ['b', 'B', 'a', '_', '~', 'a-1', 'é', '0']
  for (let i = 0; i < 40; i++) {
    // Four orders share each instant, so ties are broken by id.
    const createdAt = new Date(Date.UTC(2026, 0, 1, 10, 0, Math.floor(i / 4))).toISOString()
    const order: Order = {
      id: `${ids[i % ids.length]}-${i % 3}-${i}`,
      number: 0,
      customerId: `cus_${i % 3}`,
      status: statuses[i % statuses.length]!,
      currency: 'EUR',
      items: [{ sku: 'A-1', quantity: 1, unitPrice: i }],
      total: i,
      metadata: {},
      version: 1,
      statusHistory: [{ status: 'pending', at: createdAt }],
      createdAt,
      updatedAt: createdAt
    }
    await storeOrder(memory, order)
    await storeOrder(storage, order)
  }
  const filters: Array<ListOrdersQuery['filter']> = [
    undefined,
    { customerId: 'cus_1' },
    { status: 'paid' },
    { status: ['paid', 'shipped'] },
    { customerId: 'cus_2', status: ['cancelled', 'pending'] },
    { ids: ['a-1-5', 'b-0-0', '_-0-3', 'missing', '~-1-4', 'é-0-6'] },
    { ids: ['a-1-5', 'b-0-0', '_-0-3', '~-1-4'], status: ['pending', 'cancelled'] },
    { createdFrom: '2026-01-01T10:00:02.000Z', createdTo: '2026-01-01T10:00:07.000Z' },
    { customerId: 'cus_0', status: 'pending', createdFrom: '2026-01-01T10:00:03.000Z' }
  ]
  for (const filter of filters) {
    for (const order of ['asc', 'desc'] as const) {
      const query = { filter, order, limit: 3 }
      const expected = await walk(reference, query)
      const visited = await walk(app, query)
      t.same(visited, expected, `${JSON.stringify(filter)} ${order}`)
      t.equal(new Set(visited).size, visited.length, 'each order once')
    }
  }
  const firstPage = await post(app, 'getOrderList', { filter: { status: 'paid' } })
  t.equal(firstPage.body.items.length, 10, 'the default page holds every match')
  t.equal(firstPage.body.nextCursor, null)
})

t.test('a cursor walk over PostgreSQL visits every order exactly once while orders are being created', async t => {
  const app = await buildApp(t, { storage: freshStorage() })
  const before = []
  for (let i = 0; i < 12; i++) before.push((await createOrder(app)).id)
  const added: string[] = []
  const addOne = async () => { added.push((await createOrder(app)).id) }

  const newestFirst = await walk(app, { limit: 5 }, addOne)
  t.same(newestFirst, [...before].reverse(), 'newest first, none of the later orders')
  const oldestFirst = await walk(app, { order: 'asc', limit: 5 }, addOne)
  t.same(oldestFirst.slice(0, 12), before, 'oldest first')
  t.same(oldestFirst.slice(12), added.slice(0, oldestFirst.length - 12), 'then the orders created during the walk')
})

t.test('updateOrderStatus over PostgreSQL moves, refuses stale versions and treats a repeat as a no-op', async t => {
  const app = await buildApp(t, { storage: freshStorage() })
  const order = await createOrder(app)
  const paid = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid', expectedVersion: 1, reason: 'card' })
  t.equal(paid.status, 200)
  t.match(paid.body, { status: 'paid', version: 2, statusHistory: [{ status: 'pending' }, { status: 'paid', reason: 'card' }] })

  const stale = await post(app, 'updateOrderStatus', { id: order.id, status: 'shipped', expectedVersion: 1 })
  t.equal(stale.status, 409)
  t.equal(stale.body.code, 'ORDER_VERSION_CONFLICT')

  const again = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  t.equal(again.status, 200)
  t.same(again.body, paid.body, 'no new version, no new history entry')

  const backwards = await post(app, 'updateOrderStatus', { id: order.id, status: 'pending' })
  t.equal(backwards.body.code, 'ORDER_INVALID_TRANSITION')
  const missing = await post(app, 'updateOrderStatus', { id: 'no-such-order', status: 'paid' })
  t.equal(missing.body.code, 'ORDER_NOT_FOUND')

  const listed = await post(app, 'getOrderList', { filter: { status: 'paid' } })
  t.same(listed.body.items, [paid.body], 'the list sees the new status')
})

t.test('two app instances on one database racing on one idempotency key create exactly one order', async t => {
  const table = db.freshTable()
  const one = await buildApp(t, { storage: postgresStorage({ client: db.client, table }) })
  const other = await buildApp(t, { storage: postgresStorage({ client: db.connect(), table }) })
  const key = { 'idempotency-key': 'race' }
  const responses = await Promise.all(Array.from({ length: 16 }, (_, i) => post(i % 2 === 0 ? one : other, 'createOrder', orderBody(), key)))
  const created = responses.filter(response => response.status === 201)
  t.ok(created.length > 0)
  t.same(new Set(created.map(response => response.body.id)).size, 1, 'every 201 is the same order')
  t.same(responses.filter(response => response.status !== 201).map(response => response.body.code),
    Array(responses.length - created.length).fill('ORDER_IDEMPOTENCY_IN_PROGRESS'), 'the others are told to retry')
  t.equal(await countOrders(postgresStorage({ client: db.client, table })), 1)
})

t.test('two app instances on one database racing on one order never lose an update nor break the workflow', async t => {
  const table = db.freshTable()
  const one = await buildApp(t, { storage: postgresStorage({ client: db.client, table }) })
  const other = await buildApp(t, { storage: postgresStorage({ client: db.connect(), table }) })
  const allowed = (from: string, to: string) => (defaultWorkflow.transitions as Record<string, readonly string[]>)[from]!.includes(to)
  const checkInvariants = (order: Order, label: string) => {
    t.equal(order.version, order.statusHistory.length, `${label}: version counts the history`)
    order.statusHistory.slice(1).forEach((change, i) =>
      t.ok(allowed(order.statusHistory[i]!.status, change.status), `${label}: ${order.statusHistory[i]!.status} -> ${change.status} is allowed`))
  }
  for (let round = 0; round < 3; round++) {
    const order = await createOrder(one)
    const moves = ['paid', 'cancelled', 'shipped', 'refunded', 'delivered', 'paid', 'shipped', 'refunded']
    const responses = await Promise.all(moves.map((status, i) => post(i % 2 === 0 ? one : other, 'updateOrderStatus', { id: order.id, status })))
    for (const response of responses) {
      if (response.status === 200) checkInvariants(response.body, `round ${round} response`)
      else t.equal(response.body.code, 'ORDER_INVALID_TRANSITION', `round ${round}: a refused move is a workflow refusal`)
    }
    const stored = (await post(other, 'getOrderList', { filter: { ids: [order.id] } })).body.items[0]
    checkInvariants(stored, `round ${round} stored`)
    const answered = responses.filter(response => response.status === 200).map(response => response.body as Order)
    t.ok(answered.every(order => stored.statusHistory[order.version - 1].status === order.status), `round ${round}: every answer is in the stored history`)
    t.equal(new Set(answered.map(order => order.version)).size, stored.version - 1, `round ${round}: every stored move was answered`)
  }
})

t.test('a storage failure answers 503 ORDER_STORAGE_UNAVAILABLE and the app serves again once the database is back', async t => {
  // A pool pointed at a port nobody listens on: real connection errors from a real driver.
  const port = await new Promise<number>(resolve => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
  const unreachable = new pg.Pool({ host: '127.0.0.1', port, user: 'postgres', database: 'test' })
  t.teardown(() => unreachable.end())
  let down = false
  const flaky: PostgresClient = { query: (text, params) => (down ? unreachable : db.client).query(text, params) }
  const storage = freshStorage(flaky)
  const app = await buildApp(t, { storage })
  const order = await createOrder(app)

  down = true
  const failures = await Promise.all([
    post(app, 'createOrder', orderBody()),
    post(app, 'createOrder', orderBody(), { 'idempotency-key': 'during-outage' }),
    post(app, 'getOrderList', {}),
    post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  ])
  for (const failure of failures) {
    t.equal(failure.status, 503)
    t.equal(failure.body.code, 'ORDER_STORAGE_UNAVAILABLE')
  }

  const rejecting: PostgresClient = { query: async () => { throw new Error('connection terminated unexpectedly') } }
  const broken = await buildApp(t, { storage: postgresStorage({ client: rejecting }) }).catch(err => err)
  t.match(broken, { message: /connection terminated/ }, 'a database that is down at register fails register')

  down = false
  t.equal((await post(app, 'getOrderList', {})).body.items.length, 1, 'nothing was half-written')
  const retried = await post(app, 'createOrder', orderBody(), { 'idempotency-key': 'during-outage' })
  t.equal(retried.status, 201, 'a retried create succeeds once the database is back')
  t.equal(retried.headers['idempotent-replayed'], undefined)
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })).status, 200)
  t.equal((await post(app, 'getOrderList', {})).body.items.length, 2)
})
