// The desk's serving side: off by default, the page and its assets from memory under a strict CSP, relative addresses, desk.hooks, and the options checked at register.
import Fastify from 'fastify'
import t from 'tap'
import orderPlugin from '../../lib/index.js'
import { apiBaseOf, deskRoutes } from '../../lib/desk/desk-routes.js'
import { loadDeskAssets } from '../../lib/desk/desk-assets.js'
import { buildApp } from '../helper.js'

const get = async (app: Awaited<ReturnType<typeof buildApp>>, url: string, headers: Record<string, string> = {}) => await app.inject({ method: 'GET', url, headers })

t.test('without the desk option there is no page, no asset and no changeOrder route', async t => {
  const app = await buildApp(t, { changes: true })
  t.equal((await get(app, '/order/desk')).statusCode, 404)
  t.equal((await get(app, '/order/desk/config.json')).statusCode, 404)
  t.equal((await app.inject({ method: 'POST', url: '/order/changeOrder', payload: {} })).statusCode, 404)
})

t.test('desk: true serves the page at /order/desk with a CSP that forbids inline script and other hosts, and its assets below it', async t => {
  const app = await buildApp(t, { desk: true })
  const page = await get(app, '/order/desk')
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], 'text/html')
  const csp = String(page.headers['content-security-policy'])
  t.match(csp, "default-src 'self'")
  t.match(csp, "script-src 'self'")
  t.notMatch(csp, 'unsafe-inline')
  t.equal(page.headers['x-content-type-options'], 'nosniff')
  t.match(page.body, '<h1 id="desk-title">Orders</h1>')
  t.match(page.body, '<title>Orders</title>')
  t.notMatch(page.body, /<script>|<script[^>]*>[^<]/, 'no inline script')
  t.notMatch(page.body, /(src|href|content)="\/|https?:/, 'every address is relative')
  const [, script] = /<script type="module" src="([^"]+)"/.exec(page.body)!
  const [, style] = /<link rel="stylesheet" href="([^"]+)"/.exec(page.body)!
  t.match(script, /^desk\/desk\.[\w-]+\.js$/)
  const js = await get(app, `/order/${script!}`)
  t.equal(js.statusCode, 200)
  t.match(js.headers['content-type'], 'text/javascript')
  t.match(js.headers['cache-control'], 'immutable')
  const css = await get(app, `/order/${style!}`)
  t.equal(css.statusCode, 200)
  t.match(css.headers['content-type'], 'text/css')
  const config = await get(app, '/order/desk/config.json')
  t.same(config.json(), {
    title: 'Orders',
    api: './',
    initial: 'pending',
    statuses: ['pending', 'paid', 'shipped', 'delivered', 'cancelled', 'refunded'],
    moves: { pending: ['paid', 'cancelled'], paid: ['shipped', 'cancelled', 'refunded'], shipped: ['delivered', 'refunded'], delivered: ['refunded'], cancelled: [], refunded: [] },
    changes: false
  })
  t.equal((await app.inject({ method: 'POST', url: '/order/changeOrder', payload: {} })).statusCode, 404, 'changes off: no changeOrder')
})

t.test('the desk hides its routes from OpenAPI', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  const hidden: unknown[] = []
  app.addHook('onRoute', route => { if (route.url.includes('desk')) hidden.push(route.schema) })
  await app.register(orderPlugin, { desk: true })
  await app.ready()
  t.equal(hidden.length, 8, 'four GET routes and their HEAD')
  t.ok(hidden.every(schema => (schema as { hide?: boolean }).hide === true))
})

t.test('with changes on, the desk turns on changeOrder and tells the page', async t => {
  const app = await buildApp(t, { desk: true, changes: true })
  t.equal((await app.inject({ method: 'POST', url: '/order/changeOrder', payload: {} })).statusCode, 400, 'served: the empty body is refused by its schema')
  t.equal((await get(app, '/order/desk/config.json')).json().changes, true)
})

t.test('desk.path, desk.title and a prefix: the page is where asked, with its title escaped, and finds the routes relative to itself', async t => {
  const app = await buildApp(t, { prefix: '/api', desk: { path: '/staff/orders', title: 'Shop <desk> & "co"' } })
  const page = await get(app, '/api/staff/orders')
  t.equal(page.statusCode, 200)
  t.match(page.body, '<title>Shop &lt;desk&gt; &amp; &quot;co&quot;</title>')
  t.match(page.body, 'content="orders/config.json"')
  const config = (await get(app, '/api/staff/orders/config.json')).json()
  t.equal(config.api, '../order/')
  t.equal(config.title, 'Shop <desk> & "co"')
  t.equal((await get(app, '/order/desk')).statusCode, 404)
})

t.test('the routes\' address relative to the page, for any prefix and path', async t => {
  t.equal(apiBaseOf(undefined, '/order/desk'), './')
  t.equal(apiBaseOf('/api', '/order/desk'), './')
  t.equal(apiBaseOf(undefined, '/desk'), 'order/')
  t.equal(apiBaseOf('/api/', '/desk'), 'order/')
  t.equal(apiBaseOf('/api', '/admin/shop/desk'), '../../order/')
  t.equal(apiBaseOf(undefined, '/order/staff/desk'), '../')
})

t.test('the desk turns the event stream on, even where stream is false', async t => {
  for (const stream of [undefined, false]) {
    const app = await buildApp(t, { desk: true, stream })
    t.ok(app.hasRoute({ method: 'GET', url: '/order/events' }), `stream: ${String(stream)}`)
  }
  const app = await buildApp(t, { desk: true, stream: { maxClients: 0 + 1 } })
  t.ok(app.hasRoute({ method: 'GET', url: '/order/events' }), 'its options kept')
})

t.test('a storage without the event feed cannot serve the desk or the stream, and register says so', async t => {
  const { memoryStorage } = await import('../../lib/index.js')
  const storage = memoryStorage()
  // The orders' methods alone, as a storage written before the feed has them.
  const withoutFeed = Object.fromEntries((['create', 'get', 'list', 'replace', 'purgeIdempotencyKeys'] as const).map(name => [name, storage[name].bind(storage)]))
  const app = Fastify()
  t.teardown(() => app.close())
  await t.rejects(async () => { await app.register(orderPlugin, { desk: true, storage: withoutFeed as never }).ready() },
    { code: 'ORDER_INVALID_OPTIONS', message: /the desk needs the event stream, which needs a storage with the event feed .*turn the desk off/ })
  const streamOnly = Fastify()
  t.teardown(() => streamOnly.close())
  await t.rejects(async () => { await streamOnly.register(orderPlugin, { stream: true, storage: withoutFeed as never }).ready() },
    { code: 'ORDER_INVALID_OPTIONS', message: /^fastify-order: stream needs a storage with the event feed .*turn stream off/ })
})

t.test('desk.hooks run on the page, its settings and its assets; the data routes keep their own', async t => {
  const seen: string[] = []
  const app = await buildApp(t, {
    desk: {
      hooks: {
        onRequest: async (request, reply) => {
          seen.push(request.url)
          if (request.headers.cookie !== 'staff=1') await reply.code(401).send({ message: 'log in' })
        }
      }
    }
  })
  t.equal((await get(app, '/order/desk')).statusCode, 401)
  t.equal((await get(app, '/order/desk/config.json')).statusCode, 401)
  const page = await get(app, '/order/desk', { cookie: 'staff=1' })
  t.equal(page.statusCode, 200)
  const [, script] = /src="([^"]+)"/.exec(page.body)!
  t.equal((await get(app, `/order/${script!}`)).statusCode, 401)
  t.equal((await app.inject({ method: 'POST', url: '/order/getOrderList', payload: {} })).statusCode, 200, 'the data routes are not behind desk.hooks')
  t.equal((await get(app, '/order/events')).statusCode, 401, 'the event stream is behind desk.hooks')
  t.same(seen.length, 5)
})

t.test('register refuses a desk option it cannot serve, saying what to change', async t => {
  const cases: Array<[unknown, RegExp]> = [
    ['yes', /desk must be true or an object like/],
    [[], /desk must be true or an object like/],
    [{ route: true }, /unknown option "desk.route"; the options of desk are path, title, hooks/],
    [{ path: 'desk' }, /desk.path must be a path like "\/order\/desk"/],
    [{ path: '/desk/' }, /desk.path must be a path like/],
    [{ path: '/a/../desk' }, /desk.path must be a path like/],
    [{ path: 7 }, /desk.path must be a path like/],
    [{ title: '' }, /desk.title must be a string of 1 to 100 characters/],
    [{ title: 'x'.repeat(101) }, /desk.title must be a string of 1 to 100 characters/],
    [{ hooks: 'login' }, /desk.hooks must be an object like \{ onRequest, preHandler \}/],
    [{ hooks: { onSend: () => {} } }, /desk.hooks.onSend is not supported; use desk.hooks.onRequest or desk.hooks.preHandler/],
    [{ hooks: { preHandler: [1] } }, /desk.hooks.preHandler must be a hook function or an array of them/]
  ]
  for (const [desk, message] of cases) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(orderPlugin, { desk: desk as never }).ready() }, { code: 'ORDER_INVALID_OPTIONS', message }, JSON.stringify(desk))
    await app.close()
  }
  const off = Fastify()
  await off.register(orderPlugin, { desk: false }).ready()
  t.equal((await off.inject({ method: 'GET', url: '/order/desk' })).statusCode, 404, 'desk: false is off')
  await off.close()
})

t.test('a package whose page was not built fails register, saying to build it', async t => {
  t.throws(() => loadDeskAssets(new URL('./no-such-folder/', import.meta.url)), { code: 'ORDER_INVALID_OPTIONS', message: /desk: the page is not built .*run npm run build/ })
  const app = Fastify()
  t.teardown(() => app.close())
  const { compileWorkflow, defaultWorkflow } = await import('../../lib/orders/workflow.js')
  await t.rejects(async () => await app.register(deskRoutes, { desk: { path: '/order/desk', title: 'Orders', hooks: undefined }, prefixPath: undefined, workflow: compileWorkflow(defaultWorkflow), changes: false, folder: new URL('./nowhere/', import.meta.url) }).ready(),
    { code: 'ORDER_INVALID_OPTIONS' })
})

t.test('the first load (script, style and page) is at most 60 KB gzipped', async t => {
  const { gzipSync } = await import('node:zlib')
  const app = await buildApp(t, { desk: true, changes: true })
  const page = await get(app, '/order/desk')
  const addresses = [...page.body.matchAll(/(?:src|href)="(desk\/[^"]+)"/g)].map(match => match[1]!)
  t.equal(addresses.length, 2)
  let bytes = gzipSync(page.body).length
  for (const address of addresses) bytes += gzipSync((await get(app, `/order/${address}`)).rawPayload).length
  t.ok(bytes <= 60 * 1024, `${bytes} bytes gzipped`)
})
