import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
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
    ['maxPageSize of 0', { maxPageSize: 0 }, /^fastify-order: maxPageSize must be an integer from 1 to 10000, got 0$/],
    ['maxPageSize as a string', { maxPageSize: '50' }, /maxPageSize must be an integer from 1 to 10000, got "50"/],
    ['fractional maxItems', { maxItems: 1.5 }, /maxItems must be an integer from 1 to 10000, got 1.5/],
    ['negative idempotencyTtl', { idempotencyTtl: -1 }, /idempotencyTtl must be an integer from 1 to 3153600000000 ms \(100 years\), got -1/],
    ['bodyLimit as NaN', { bodyLimit: Number.NaN }, /bodyLimit must be an integer from 1 to 2147483647 bytes, got NaN/],
    ['eventRetention of 0', { eventRetention: 0 }, /eventRetention must be an integer from 1 to 3153600000000 ms \(100 years\), got 0/],
    ['eventRetention as a string', { eventRetention: '30d' }, /eventRetention must be an integer from 1 to 3153600000000 ms \(100 years\), got "30d"/],
    // Bounds: past them a time would leave four-digit years (idempotency silently off), a Date would be
    // invalid (every keyed create a 500), or a page would not fit one bounded statement.
    ['an idempotencyTtl of 3e14 ms', { idempotencyTtl: 3e14 }, /idempotencyTtl must be an integer from 1 to 3153600000000 ms \(100 years\), got 300000000000000/],
    ['an idempotencyTtl of MAX_SAFE_INTEGER', { idempotencyTtl: Number.MAX_SAFE_INTEGER }, /idempotencyTtl must be an integer from 1 to 3153600000000 ms/],
    ['an eventRetention past 100 years', { eventRetention: 3153600000001 }, /eventRetention must be an integer from 1 to 3153600000000 ms \(100 years\), got 3153600000001/],
    ['a maxPageSize past 10000', { maxPageSize: 10001 }, /maxPageSize must be an integer from 1 to 10000, got 10001/],
    ['a maxItems past 10000', { maxItems: 1e6 }, /maxItems must be an integer from 1 to 10000, got 1000000/],
    ['a negative feedStallWarning', { feedStallWarning: -1 }, /feedStallWarning must be an integer from 0 to 3153600000000 ms \(100 years\), got -1/],
    ['a bodyLimit of 4 GiB', { bodyLimit: 2 ** 32 }, /bodyLimit must be an integer from 1 to 2147483647 bytes, got 4294967296/],
    ['a storage with half of the event feed', { storage: { ...memoryStorage(), listEvents: undefined } }, /storage\.listEvents is not a function; a storage with any of them needs all of listEvents, purgeEvents/],
    ['a storage with subscriptions and no feed', { storage: { ...memoryStorage(), listEvents: undefined, purgeEvents: undefined } }, /a storage with subscriptions needs the event feed/],
    ['a storage missing a method', { storage: { create () {}, get () {}, list () {} } }, /storage\.replace is not a function; every storage needs create, get, list, replace, purgeIdempotencyKeys/],
    ['a storage that is a word', { storage: 'memory' }, /storage is a string; pass a storage such as memoryStorage\(\) or postgresStorage\(\{ client: pool \}\)/],
    ['a storage that is a number', { storage: 5 }, /storage\.create is not a function/],
    ['options that are not an object', 'fast', /options must be an object like \{ storage \}/],
    ['a storage feedHealth that is not a function', { storage: { ...memoryStorage(), feedHealth: 1 } }, /storage\.feedHealth must be a function when given/],
    ['a storage init that is not a function', { storage: { ...memoryStorage(), init: true } }, /storage\.init must be a function/],
    ['a prefix without a leading slash', { prefix: 'api' }, /prefix must be a path starting with "\/"/],
    ['authorize not a function', { authorize: { customerId: 'c' } }, /authorize must be a function/],
    ['hooks not an object', { hooks: () => {} }, /hooks must be an object/],
    ['an unsupported hook', { hooks: { preSerialization: () => {} } }, /hooks\.preSerialization is not supported/],
    ['a hook that is not a function', { hooks: { onRequest: [() => {}, 'auth'] } }, /hooks\.onRequest must be a hook function/]
  ]
  for (const [name, options, message] of cases) await registerFails(t, options, message, name)
})

t.test('a storage with only the orders serves the routes, and what needs the rest says so when called', async t => {
  const { create, get, list, replace, purgeIdempotencyKeys } = memoryStorage()
  const app = await buildApp(t, { storage: { create, get, list, replace, purgeIdempotencyKeys } })
  const order = await createOrder(app)
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })).status, 200)
  t.same((await app.orders.list()).items.map(({ id }) => id), [order.id])
  await t.rejects(app.orders.listEvents(), { code: 'ORDER_INVALID_OPTIONS', message: /listEvents needs a storage with the event feed; this storage has no listEvents method/ })
  t.throws(() => app.orders.subscribe('erp', async () => {}), { code: 'ORDER_INVALID_SUBSCRIPTION', message: /this storage has no lease method/ })
  t.same(app.orders.subscriptions(), [])
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

t.test('registering the plugin twice on one instance fails at register, saying how to serve two prefixes', async t => {
  const app = Fastify()
  app.register(orderPlugin)
  app.register(orderPlugin, { prefix: '/eu' })
  await t.rejects(async () => { await app.ready() }, {
    code: 'ORDER_INVALID_OPTIONS',
    message: /already registered on this instance.*app\.register\(async child => \{ await child\.register\(orderPlugin, \{ prefix: '\/eu' \}\) \}\)/
  })
  await app.close()
})

t.test('two prefixes are served by registering the plugin in two encapsulated contexts', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  const services: Record<string, FastifyInstance['orders']> = {}
  for (const prefix of ['/eu', '/us']) {
    await app.register(async child => {
      await child.register(orderPlugin, { prefix, storage: memoryStorage() })
      services[prefix] = child.orders
    })
  }
  await app.ready()
  const created = await app.inject({ method: 'POST', url: '/eu/order/createOrder', payload: orderBody() })
  t.equal(created.statusCode, 201)
  const listed = async (prefix: string) => (await app.inject({ method: 'POST', url: `${prefix}/order/getOrderList`, payload: {} })).json().items.map(({ id }: { id: string }) => id)
  t.same(await listed('/eu'), [created.json().id])
  t.same(await listed('/us'), [], 'each prefix has its own plugin and storage')
  t.same((await services['/eu']!.list()).items.map(({ id }) => id), [created.json().id], 'each context has its own app.orders')
  t.notOk(app.hasDecorator('orders'), 'the root has none')
})
