import t from 'tap'
import { memoryStorage, type Order, type OrderStorage } from '../../lib/index.js'
import { buildApp, createOrder, post, storedOrder, storeOrder } from '../helper.js'

const statuses = ['pending', 'paid', 'shipped', 'cancelled']

/** Seeds a storage with orders spread over customers, statuses and time, with createdAt ties. */
async function seed (storage: OrderStorage, count: number): Promise<Order[]> {
  const orders: Order[] = []
  for (let i = 0; i < count; i++) {
    // Three orders share each millisecond, so ties on createdAt are ordered by id.
    const createdAt = new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 3) * 1000).toISOString()
    const status = statuses[i % statuses.length]!
    const order = storedOrder({
      id: `ord_${((i * 7919) % 1000).toString().padStart(4, '0')}_${i}`,
      customerId: `cus_${i % 3}`,
      status,
      items: [{ sku: 'A', quantity: 1, unitPrice: i }],
      total: i,
      statusHistory: [{ status, at: createdAt }],
      createdAt,
      updatedAt: createdAt
    })
    await storeOrder(storage, order)
    orders.push(order)
  }
  return orders
}

const ascending = (a: Order, b: Order) => a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1

async function walk (app: Awaited<ReturnType<typeof buildApp>>, query: Record<string, unknown>): Promise<Order[]> {
  const seen: Order[] = []
  let cursor: string | undefined
  do {
    const { status, body } = await post(app, 'getOrderList', cursor === undefined ? query : { ...query, cursor })
    if (status !== 200) throw new Error(JSON.stringify(body))
    seen.push(...body.items)
    cursor = body.nextCursor ?? undefined
  } while (cursor !== undefined)
  return seen
}

t.test('with no body at all, or an empty JSON body, getOrderList returns the first page', async t => {
  const app = await buildApp(t)
  await createOrder(app)
  for (const request of [
    { headers: {} },
    { headers: { 'content-type': 'application/json' }, payload: '' },
    { headers: { 'content-type': 'text/plain;charset=UTF-8' }, payload: '' },
    { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' },
    { headers: { 'content-type': 'application/json' }, payload: '{}' }
  ]) {
    const response = await app.inject({ method: 'POST', url: '/order/getOrderList', ...request })
    t.equal(response.statusCode, 200)
    t.equal(response.json().items.length, 1)
    t.equal(response.json().nextCursor, null)
  }
})

t.test('pages are newest first by default, 20 long, with a cursor until the last page', async t => {
  const storage = memoryStorage()
  const orders = await seed(storage, 45)
  const app = await buildApp(t, { storage })
  const first = await post(app, 'getOrderList', {})
  t.equal(first.body.items.length, 20)
  t.same(first.body.items.map((o: Order) => o.id), [...orders].sort(ascending).reverse().slice(0, 20).map(o => o.id))
  t.type(first.body.nextCursor, 'string')
  const all = await walk(app, {})
  t.same(all.map(o => o.id), [...orders].sort(ascending).reverse().map(o => o.id))
})

t.test('order "asc" walks oldest first', async t => {
  const storage = memoryStorage()
  const orders = await seed(storage, 30)
  const app = await buildApp(t, { storage })
  t.same((await walk(app, { order: 'asc', limit: 7 })).map(o => o.id), [...orders].sort(ascending).map(o => o.id))
})

t.test('every filter, in both orders, visits each matching order exactly once', async t => {
  const storage = memoryStorage()
  const orders = await seed(storage, 60)
  const app = await buildApp(t, { storage })
  const from = orders[12]!.createdAt
  const to = orders[40]!.createdAt
  const filters: Array<[Record<string, unknown>, (o: Order) => boolean]> = [
    [{}, () => true],
    [{ customerId: 'cus_1' }, o => o.customerId === 'cus_1'],
    [{ status: 'paid' }, o => o.status === 'paid'],
    [{ status: ['paid', 'cancelled'] }, o => o.status === 'paid' || o.status === 'cancelled'],
    [{ customerId: 'cus_2', status: ['pending', 'shipped'] }, o => o.customerId === 'cus_2' && (o.status === 'pending' || o.status === 'shipped')],
    [{ createdFrom: from }, o => o.createdAt >= from],
    [{ createdTo: to }, o => o.createdAt < to],
    [{ createdFrom: from, createdTo: to, customerId: 'cus_0' }, o => o.createdAt >= from && o.createdAt < to && o.customerId === 'cus_0'],
    [{ ids: [orders[3]!.id, orders[9]!.id, 'ord_unknown', orders[3]!.id] }, o => o === orders[3] || o === orders[9]],
    [{ ids: orders.slice(0, 10).map(o => o.id), status: 'paid' }, o => orders.indexOf(o) < 10 && o.status === 'paid']
  ]
  for (const [filter, keep] of filters) {
    const expected = orders.filter(keep).sort(ascending)
    for (const order of ['asc', 'desc'] as const) {
      const seen = await walk(app, { filter, order, limit: 4 })
      t.same(seen.map(o => o.id), (order === 'asc' ? expected : [...expected].reverse()).map(o => o.id), `${JSON.stringify(filter)} ${order}`)
    }
  }
})

t.test('createdFrom is inclusive and createdTo exclusive, whatever the offset spelling', async t => {
  const storage = memoryStorage()
  const orders = await seed(storage, 9)
  const app = await buildApp(t, { storage })
  // orders[3..5] share 2026-01-01T00:00:01.000Z
  const { body } = await post(app, 'getOrderList', { filter: { createdFrom: '2026-01-01T01:00:01+01:00', createdTo: '2026-01-01T00:00:02.000Z' } })
  t.same(body.items.map((o: Order) => o.id).sort(), orders.slice(3, 6).map(o => o.id).sort())
})

t.test('a walk sees every order exactly once while new orders are created', async t => {
  const app = await buildApp(t)
  for (let i = 0; i < 25; i++) await createOrder(app, { customerId: 'cus_walk' })
  const before = (await post(app, 'getOrderList', { limit: 100 })).body.items.map((o: Order) => o.id)
  const seen: string[] = []
  let cursor: string | undefined
  do {
    const { body } = await post(app, 'getOrderList', { limit: 4, ...(cursor && { cursor }) })
    seen.push(...body.items.map((o: Order) => o.id))
    await createOrder(app, { customerId: 'cus_walk' })
    cursor = body.nextCursor ?? undefined
  } while (cursor !== undefined)
  t.same(seen, before, 'newest first: orders created during the walk come before its start')
  t.equal(new Set(seen).size, seen.length)

  const ascSeen: string[] = []
  cursor = undefined
  let created = 0
  do {
    const { body } = await post(app, 'getOrderList', { limit: 5, order: 'asc', ...(cursor && { cursor }) })
    ascSeen.push(...body.items.map((o: Order) => o.id))
    if (created++ < 3) await createOrder(app, { customerId: 'cus_walk' })
    cursor = body.nextCursor ?? undefined
  } while (cursor !== undefined)
  t.equal(new Set(ascSeen).size, ascSeen.length, 'no order twice')
  const final = (await post(app, 'getOrderList', { limit: 100, order: 'asc' })).body.items.map((o: Order) => o.id)
  t.same(ascSeen, final, 'oldest first: the walk ends with the orders created during it')
})

t.test('a status filter follows status changes', async t => {
  const app = await buildApp(t)
  const a = await createOrder(app)
  const b = await createOrder(app)
  await post(app, 'updateOrderStatus', { id: a.id, status: 'paid' })
  t.same((await post(app, 'getOrderList', { filter: { status: 'pending' } })).body.items.map((o: Order) => o.id), [b.id])
  t.same((await post(app, 'getOrderList', { filter: { status: 'paid', customerId: a.customerId } })).body.items.map((o: Order) => o.id), [a.id])
  await post(app, 'updateOrderStatus', { id: a.id, status: 'shipped' })
  t.same((await post(app, 'getOrderList', { filter: { status: 'paid' } })).body.items, [])
  t.equal((await post(app, 'getOrderList', { filter: { status: ['shipped'] } })).body.items[0].version, 3)
})

t.test('limit is 1 to maxPageSize', async t => {
  const storage = memoryStorage()
  await seed(storage, 12)
  const app = await buildApp(t, { storage, maxPageSize: 10 })
  t.equal((await post(app, 'getOrderList', { limit: 10 })).body.items.length, 10)
  t.equal((await post(app, 'getOrderList', {})).body.items.length, 10, 'the default page shrinks to maxPageSize')
  for (const limit of [0, 11, 2.5, '5']) {
    const { status, body } = await post(app, 'getOrderList', { limit })
    t.equal(status, 400, `limit ${limit}`)
    t.equal(body.code, 'FST_ERR_VALIDATION')
  }
  const big = await buildApp(t)
  t.equal((await post(big, 'getOrderList', { limit: 101 })).status, 400, 'default maxPageSize is 100')
})

t.test('a malformed cursor, or one sent with another filter or order, is 400 ORDER_INVALID_CURSOR', async t => {
  const storage = memoryStorage()
  await seed(storage, 10)
  const app = await buildApp(t, { storage })
  const { nextCursor } = (await post(app, 'getOrderList', { limit: 2, filter: { status: ['paid', 'pending'] } })).body
  t.equal((await post(app, 'getOrderList', { limit: 2, cursor: nextCursor, filter: { status: ['pending', 'paid'] } })).status, 200, 'the same filter spelled in another order')
  t.equal((await post(app, 'getOrderList', { limit: 5, cursor: nextCursor, filter: { status: ['paid', 'pending'] } })).status, 200, 'limit may change')
  const forged = [
    nextCursor.slice(0, -2),
    nextCursor + 'AA',
    nextCursor.replace(/^1\./, '2.'),
    'not a cursor!',
    '1.0.0.x',
    Buffer.from(nextCursor).toString('base64url')
  ]
  for (const cursor of forged) {
    const { status, body } = await post(app, 'getOrderList', { cursor, filter: { status: ['paid', 'pending'] } })
    t.equal(status, 400, cursor)
    t.equal(body.code, 'ORDER_INVALID_CURSOR', cursor)
  }
  for (const query of [{ filter: { status: 'paid' } }, { filter: { status: ['paid', 'pending'] }, order: 'asc' }, {}]) {
    const { status, body } = await post(app, 'getOrderList', { ...query, cursor: nextCursor })
    t.equal(status, 400, JSON.stringify(query))
    t.equal(body.code, 'ORDER_INVALID_CURSOR')
  }
})

t.test('filter values are checked by the schema', async t => {
  const app = await buildApp(t)
  for (const body of [
    { filter: { status: 'lost' } },
    { filter: { status: [] } },
    { filter: { status: ['paid', 'paid'] } },
    { filter: { ids: Array.from({ length: 101 }, (_, i) => `id${i}`) } },
    { filter: { ids: [] } },
    { filter: { createdFrom: 'yesterday' } },
    { filter: { createdTo: '2026-01-01' } },
    { filter: { customer: 'c' } },
    { order: 'newest' },
    { cursor: '' }
  ]) {
    const response = await post(app, 'getOrderList', body)
    t.equal(response.status, 400, JSON.stringify(body).slice(0, 60))
    t.equal(response.body.code, 'FST_ERR_VALIDATION')
  }
})
