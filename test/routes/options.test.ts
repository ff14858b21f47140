import t, { type Test } from 'tap'
import Fastify from 'fastify'
import orderPlugin, { memoryStorage, type OrderPluginOptions } from '../../lib/index.js'
import { buildApp, createOrder, orderBody, post } from '../helper.js'

async function registerFails (t: Test, options: unknown, message: RegExp, name: string) {
  const app = Fastify()
  app.register(orderPlugin, options as OrderPluginOptions)
  await t.rejects(async () => { await app.ready() }, { code: 'ORDER_INVALID_OPTIONS', message }, name)
  await app.close()
}

t.test('options are checked at register, with a message that says what to change', async t => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['a typo in an option name', { maxPagesize: 10 }, /unknown option "maxPagesize"/],
    ['maxPageSize of 0', { maxPageSize: 0 }, /maxPageSize must be a positive integer/],
    ['maxPageSize as a string', { maxPageSize: '50' }, /maxPageSize must be a positive integer, got "50"/],
    ['fractional maxItems', { maxItems: 1.5 }, /maxItems must be a positive integer/],
    ['negative idempotencyTtl', { idempotencyTtl: -1 }, /idempotencyTtl must be a positive integer/],
    ['bodyLimit as NaN', { bodyLimit: Number.NaN }, /bodyLimit must be a positive integer/],
    ['eventRetention of 0', { eventRetention: 0 }, /eventRetention must be a positive integer, got 0/],
    ['eventRetention as a string', { eventRetention: '30d' }, /eventRetention must be a positive integer, got "30d"/],
    // Bounds: past them a time would leave four-digit years (idempotency silently off), a Date would be
    // invalid (every keyed create a 500), or a page would not fit one bounded statement.
    ['an idempotencyTtl of 3e14 ms', { idempotencyTtl: 3e14 }, /idempotencyTtl must be at most 3153600000000 ms \(100 years\), got 300000000000000/],
    ['an idempotencyTtl of MAX_SAFE_INTEGER', { idempotencyTtl: Number.MAX_SAFE_INTEGER }, /idempotencyTtl must be at most 3153600000000 ms/],
    ['an eventRetention past 100 years', { eventRetention: 3153600000001 }, /eventRetention must be at most 3153600000000 ms \(100 years\)/],
    ['a maxPageSize past 10000', { maxPageSize: 10001 }, /maxPageSize must be at most 10000, got 10001/],
    ['a maxItems past 10000', { maxItems: 1e6 }, /maxItems must be at most 10000/],
    ['a bodyLimit of 4 GiB', { bodyLimit: 2 ** 32 }, /bodyLimit must be at most 2147483647 bytes/],
    ['a storage without the event feed', { storage: { ...memoryStorage(), listEvents: undefined } }, /storage\.listEvents is not a function/],
    ['a storage missing a method', { storage: { create () {}, get () {}, list () {} } }, /storage\.replace is not a function/],
    ['a storage that is not an object', { storage: 'memory' }, /storage\.create is not a function/],
    ['a storage init that is not a function', { storage: { ...memoryStorage(), init: true } }, /storage\.init must be a function/],
    ['a prefix without a leading slash', { prefix: 'api' }, /prefix must be a path starting with "\/"/],
    ['authorize not a function', { authorize: { customerId: 'c' } }, /authorize must be a function/],
    ['hooks not an object', { hooks: () => {} }, /hooks must be an object/],
    ['an unsupported hook', { hooks: { preSerialization: () => {} } }, /hooks\.preSerialization is not supported/],
    ['a hook that is not a function', { hooks: { onRequest: [() => {}, 'auth'] } }, /hooks\.onRequest must be a hook function/]
  ]
  for (const [name, options, message] of cases) await registerFails(t, options, message, name)
})

t.test('Fastify\'s own register options may sit beside the plugin options', async t => {
  const app = await buildApp(t, { logLevel: 'silent', maxPageSize: 5 } as OrderPluginOptions)
  t.equal((await post(app, 'getOrderList', { limit: 6 })).status, 400)
})

t.test('the plugin works with no options at all, on memory storage', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin)
  const order = await createOrder(app)
  t.equal((await post(app, 'getOrderList')).body.items[0].id, order.id)
})

t.test('prefix puts the routes under it, and app.orders stays on the host', async t => {
  const app = await buildApp(t, { prefix: '/api' })
  const created = await app.inject({ method: 'POST', url: '/api/order/createOrder', payload: orderBody() })
  t.equal(created.statusCode, 201)
  t.equal((await app.inject({ method: 'POST', url: '/order/createOrder', payload: orderBody() })).statusCode, 404)
  t.equal((await app.orders.list()).items[0]!.id, created.json().id)
  const routes = app.printRoutes({ commonPrefix: false })
  t.match(routes, /\/api\/order\/getOrderList \(POST\)/)
  t.match(routes, /\/api\/order\/updateOrderStatus \(POST\)/)
})

t.test('a prefix from an enclosing register adds to the plugin\'s own', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(async (api) => { await api.register(orderPlugin, { prefix: '/shop' }) }, { prefix: '/v2' })
  t.equal((await app.inject({ method: 'POST', url: '/v2/shop/order/getOrderList' })).statusCode, 200)
})

t.test('the plugin adds exactly its three POST routes', async t => {
  const app = Fastify({ exposeHeadRoutes: true })
  t.teardown(() => app.close())
  const routes: string[] = []
  app.addHook('onRoute', route => { routes.push(`${route.method} ${route.url}`) })
  await app.register(orderPlugin)
  t.same(routes.sort(), ['POST /order/createOrder', 'POST /order/getOrderList', 'POST /order/updateOrderStatus'])
  t.equal((await app.inject({ method: 'GET', url: '/order/getOrderList' })).statusCode, 404, 'reading the list uses POST')
})

t.test('bodyLimit caps the request body of the three routes with 413', async t => {
  const app = await buildApp(t, { bodyLimit: 512 })
  const body = orderBody({ metadata: { note: 'x'.repeat(480) } })
  const { status, body: error } = await post(app, 'createOrder', body)
  t.equal(status, 413)
  t.equal(error.code, 'FST_ERR_CTP_BODY_TOO_LARGE')
  t.equal((await post(app, 'createOrder', orderBody())).status, 201)
})

t.test('registering the plugin twice on one instance fails at register', async t => {
  const app = Fastify()
  app.register(orderPlugin)
  app.register(orderPlugin)
  await t.rejects(async () => { await app.ready() }, { code: 'FST_ERR_DEC_ALREADY_PRESENT' })
  await app.close()
})
