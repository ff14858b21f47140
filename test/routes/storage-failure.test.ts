// Storage failures and event listeners: a failing adapter is a 503 with the cause logged, never a half-written order.
import Fastify from 'fastify'
import t from 'tap'
import { memoryStorage, orderPlugin, type Order, type OrderStorage } from '../../lib/index.js'
import { buildApp, createOrder, logLines, orderBody, post } from '../helper.js'

const SECRET = 'connect ECONNREFUSED 10.0.0.7:5432 password=hunter2'

type Failure = 'throws' | 'rejects'

/** Wraps a working storage; the methods named in `failing` fail the way `failure` says. */
function failingStorage (inner: OrderStorage, failure: Failure, failing: ReadonlySet<string>): OrderStorage {
  const wrap = <F extends (...args: any[]) => Promise<unknown>>(name: string, method: F): F =>
    ((...args: unknown[]) => {
      if (!failing.has(name)) return method(...args)
      if (failure === 'throws') throw new Error(SECRET)
      return Promise.reject(new Error(SECRET))
    }) as F
  return {
    ...inner,
    create: wrap('create', inner.create),
    get: wrap('get', inner.get),
    list: wrap('list', inner.list),
    replace: wrap('replace', inner.replace)
  }
}

for (const failure of ['throws', 'rejects'] as const) {
  t.test(`a storage that ${failure} gives 503 ORDER_STORAGE_UNAVAILABLE on each route, with the cause logged and not sent`, async t => {
    const inner = memoryStorage()
    const failing = new Set<string>()
    const { lines, stream } = logLines()
    const app = await buildApp(t, { storage: failingStorage(inner, failure, failing) }, { logger: { stream } })
    const order = await createOrder(app)
    failing.add('create').add('get').add('list').add('replace')

    const requests: Array<[string, unknown]> = [
      ['createOrder', orderBody()],
      ['getOrderList', {}],
      ['updateOrderStatus', { id: order.id, status: 'paid' }]
    ]
    for (const [operation, payload] of requests) {
      const before = lines.length
      const response = await app.inject({ method: 'POST', url: `/order/${operation}`, payload: payload as object })
      t.equal(response.statusCode, 503, operation)
      const body = response.json()
      t.equal(body.code, 'ORDER_STORAGE_UNAVAILABLE', operation)
      t.notMatch(response.body, /ECONNREFUSED|hunter2/, 'the cause stays out of the response')
      const logged = lines.slice(before).filter(line => JSON.stringify(line).includes('ECONNREFUSED'))
      t.equal(logged.length, 1, `${operation}: the cause is logged once`)
      t.equal(logged[0]?.level, 50, 'at error level')
      t.ok(logged[0]?.reqId, 'by the request\'s logger, so the line names the request')
      t.equal(logged[0]?.err?.code, 'ORDER_STORAGE_UNAVAILABLE')
    }

    failing.clear()
    t.same((await app.orders.list()).items, [order], 'nothing half-written')
  })
}

t.test('a failing create leaves no order and no claimed key behind', async t => {
  const inner = memoryStorage()
  const failing = new Set(['create'])
  const app = await buildApp(t, { storage: failingStorage(inner, 'rejects', failing) })
  const { status, body } = await post(app, 'createOrder', orderBody(), { 'idempotency-key': 'k' })
  t.equal(status, 503)
  t.equal(body.code, 'ORDER_STORAGE_UNAVAILABLE')
  t.same(await inner.list({ order: 'desc', limit: 10 }), [])

  failing.clear()
  const retry = await post(app, 'createOrder', orderBody({ currency: 'USD' }), { 'idempotency-key': 'k' })
  t.equal(retry.status, 201, 'the key is free for the retry, whatever its body')
  t.notOk(retry.headers['idempotent-replayed'])
  t.same(await inner.list({ order: 'desc', limit: 10 }), [retry.body])
})

t.test('a failing replace leaves the order as it was', async t => {
  const inner = memoryStorage()
  const failing = new Set<string>()
  const app = await buildApp(t, { storage: failingStorage(inner, 'throws', failing) })
  const order = await createOrder(app)
  failing.add('replace')
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  t.equal(status, 503)
  t.equal(body.code, 'ORDER_STORAGE_UNAVAILABLE')
  t.same(await inner.get(order.id), order)
})

t.test('app.orders rejects with ORDER_STORAGE_UNAVAILABLE carrying the cause', async t => {
  const app = await buildApp(t, { storage: failingStorage(memoryStorage(), 'rejects', new Set(['create', 'get', 'list', 'replace'])) })
  for (const call of [
    () => app.orders.create(orderBody()),
    () => app.orders.list(),
    () => app.orders.updateStatus({ id: 'x', status: 'paid' })
  ]) {
    const err = await call().catch((err: unknown) => err) as Error & { code: string, statusCode: number }
    t.equal(err.code, 'ORDER_STORAGE_UNAVAILABLE')
    t.equal(err.statusCode, 503)
    t.equal((err.cause as Error).message, SECRET, 'the cause is there for the caller to log')
  }
})

for (const failure of ['throws', 'rejects'] as const) {
  t.test(`a storage init() that ${failure} makes register fail before the server serves`, async t => {
    const storage: OrderStorage = {
      ...memoryStorage(),
      init: failure === 'throws'
        ? () => { throw new Error('relation "orders" permission denied') }
        : async () => { throw new Error('relation "orders" permission denied') }
    }
    const app = Fastify()
    t.teardown(() => app.close())
    app.register(orderPlugin, { storage })
    await t.rejects(async () => { await app.ready() }, { message: 'relation "orders" permission denied' })
  })
}

t.test('a storage init() is awaited before the routes serve', async t => {
  let ready = false
  const storage: OrderStorage = { ...memoryStorage(), init: async () => { await new Promise(setImmediate); ready = true } }
  const app = await buildApp(t, { storage })
  t.equal(ready, true)
  t.equal((await post(app, 'getOrderList', {})).status, 200)
})

for (const failure of ['throws', 'rejects'] as const) {
  t.test(`a listener that ${failure} is logged and the request still succeeds with the stored change`, async t => {
    const { lines, stream } = logLines()
    const app = await buildApp(t, {}, { logger: { stream } })
    const listener = failure === 'throws'
      ? () => { throw new Error('mailer down') }
      : async () => { throw new Error('mailer down') }
    app.orders.on('created', listener).on('statusChanged', listener)

    const created = await post(app, 'createOrder', orderBody())
    t.equal(created.status, 201)
    const updated = await post(app, 'updateOrderStatus', { id: created.body.id, status: 'paid' })
    t.equal(updated.status, 200)
    t.equal(updated.body.status, 'paid')
    t.same((await app.orders.list()).items, [updated.body], 'the change is stored')

    const logged = lines.filter(line => JSON.stringify(line).includes('mailer down'))
    t.equal(logged.length, 2, 'each failure is logged once')
    t.same(logged.map(line => line.event), ['created', 'statusChanged'])
    t.ok(logged.every(line => line.level === 50))
  })
}

t.test('listeners run after the change is stored and before the response is sent', async t => {
  const app = await buildApp(t)
  const seen: Array<{ event: string, stored: Order | undefined }> = []
  let finished = 0
  app.orders.on('created', async (order) => {
    const stored = (await app.orders.list({ filter: { ids: [order.id] } })).items[0]
    seen.push({ event: 'created', stored })
    await new Promise(setImmediate)
    finished++
  })
  app.orders.on('statusChanged', async ({ order, from, to }) => {
    const stored = (await app.orders.list({ filter: { ids: [order.id] } })).items[0]
    seen.push({ event: `${from}->${to}`, stored })
    await new Promise(setImmediate)
    finished++
  })
  const created = await post(app, 'createOrder', orderBody())
  t.equal(finished, 1, 'the created listener finished before the response')
  const updated = await post(app, 'updateOrderStatus', { id: created.body.id, status: 'paid' })
  t.equal(finished, 2, 'the statusChanged listener finished before the response')
  t.same(seen, [
    { event: 'created', stored: created.body },
    { event: 'pending->paid', stored: updated.body }
  ], 'each listener saw the stored order')
})

t.test('a no-op update and a replay emit no event', async t => {
  const app = await buildApp(t)
  const events: string[] = []
  app.orders.on('created', () => { events.push('created') })
  app.orders.on('statusChanged', ({ to }) => { events.push(to) })
  const order = await createOrder(app)
  await post(app, 'updateOrderStatus', { id: order.id, status: 'pending' })
  await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  t.same(events, ['created', 'paid'])
})

t.test('app.orders.on rejects an unknown event or a listener that is not a function', async t => {
  const app = await buildApp(t)
  t.throws(() => app.orders.on('deleted' as 'created', () => {}), { code: 'ORDER_INVALID_LISTENER' })
  t.throws(() => app.orders.on('created', 'notify' as never), { code: 'ORDER_INVALID_LISTENER' })
})
