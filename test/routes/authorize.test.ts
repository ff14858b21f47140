// Authorization and hooks: authorize() grants, denies or scopes each operation; hooks guard the three routes only.
import createError from '@fastify/error'
import Fastify, { type FastifyRequest, type onRequestHookHandler, type preHandlerHookHandler } from 'fastify'
import t from 'tap'
import { orderPlugin, type Authorize, type OrderOperation } from '../../lib/index.js'
import { buildApp, createOrder, logLines, orderBody, post } from '../helper.js'

// The three routes every app serves; changeOrder's authorize is tested with changes (changes.test.ts).
const operations = ['getOrderList', 'createOrder', 'updateOrderStatus'] as const satisfies readonly OrderOperation[]

/** The customer a test client claims to be; a real host would read a verified session or token. */
const customerScope: Authorize = (request) => {
  const customerId = request.headers['x-customer']
  // No header: staff seeding orders. A scope with an undefined customerId would fail closed.
  return customerId === undefined ? true : { customerId: customerId as string }
}

t.test('authorize receives the request and the name of each operation', async t => {
  const calls: Array<[string, OrderOperation]> = []
  const app = await buildApp(t, {
    authorize: (request: FastifyRequest, operation) => { calls.push([request.url, operation]) }
  })
  const order = await createOrder(app)
  await post(app, 'getOrderList', {})
  await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  t.same(calls, [
    ['/order/createOrder', 'createOrder'],
    ['/order/getOrderList', 'getOrderList'],
    ['/order/updateOrderStatus', 'updateOrderStatus']
  ])
})

t.test('authorize returning false denies every route with 403 ORDER_FORBIDDEN and changes nothing', async t => {
  let deny = false
  const app = await buildApp(t, { authorize: () => !deny })
  const order = await createOrder(app)
  deny = true
  const bodies = { getOrderList: {}, createOrder: orderBody(), updateOrderStatus: { id: order.id, status: 'paid' } }
  for (const operation of operations) {
    const { status, body } = await post(app, operation, bodies[operation])
    t.equal(status, 403, operation)
    t.equal(body.code, 'ORDER_FORBIDDEN', operation)
  }
  t.same((await app.orders.list()).items, [order], 'no order created, none changed')
})

t.test('authorize returning true or nothing allows everything', async t => {
  for (const decision of [true, undefined]) {
    const app = await buildApp(t, { authorize: () => decision })
    const order = await createOrder(app, { customerId: 'alice' })
    await createOrder(app, { customerId: 'bob' })
    const list = await post(app, 'getOrderList', {})
    t.equal(list.status, 200)
    t.equal(list.body.items.length, 2, `${decision}: every customer's orders`)
    const update = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
    t.equal(update.status, 200)
  }
})

t.test('an async authorize is awaited', async t => {
  const app = await buildApp(t, {
    authorize: async (request, operation) => {
      await new Promise(setImmediate)
      return operation === 'getOrderList' ? false : customerScope(request, operation)
    }
  })
  const created = await post(app, 'createOrder', orderBody({ customerId: 'alice' }), { 'x-customer': 'alice' })
  t.equal(created.status, 201)
  const forbidden = await post(app, 'createOrder', orderBody({ customerId: 'bob' }), { 'x-customer': 'alice' })
  t.equal(forbidden.status, 403)
  t.equal(forbidden.body.code, 'ORDER_FORBIDDEN')
  const list = await post(app, 'getOrderList', {}, { 'x-customer': 'alice' })
  t.equal(list.status, 403)
  t.equal(list.body.code, 'ORDER_FORBIDDEN')
})

t.test('a customer scope limits getOrderList to that customer, whatever the filter asks', async t => {
  const app = await buildApp(t, { authorize: customerScope })
  const alice = []
  for (let i = 0; i < 5; i++) {
    alice.push(await createOrder(app, { customerId: 'alice' }))
    await createOrder(app, { customerId: 'bob' })
  }
  const asAlice = { 'x-customer': 'alice' }

  // Orders made within one millisecond are ordered by id, so the expected order is (createdAt, id).
  const aliceAsc = alice.map(order => [order.createdAt, order.id].join(' ')).sort().map(position => position.split(' ')[1])
  const page = await post(app, 'getOrderList', {}, asAlice)
  t.equal(page.status, 200)
  t.same(page.body.items.map((order: { id: string }) => order.id), [...aliceAsc].reverse())

  await app.orders.updateStatus({ id: alice[0]!.id, status: 'paid' })
  const paid = await post(app, 'getOrderList', { filter: { status: ['paid', 'pending'] } }, asAlice)
  t.same(paid.body.items.map((order: { id: string }) => order.id).sort(), alice.map(order => order.id).sort(),
    'a status filter stays in scope')

  const bobs = await post(app, 'getOrderList', { filter: { customerId: 'bob' } }, asAlice)
  t.equal(bobs.status, 200)
  t.same(bobs.body, { items: [], nextCursor: null }, 'asking for another customer gives an empty page')

  const byIds = await post(app, 'getOrderList', { filter: { ids: (await app.orders.list()).items.map(order => order.id) } }, asAlice)
  t.equal(byIds.body.items.length, 5, 'ids of other customers\' orders are simply absent')
  t.ok(byIds.body.items.every((order: { customerId: string }) => order.customerId === 'alice'))

  const seen: string[] = []
  let cursor: string | undefined
  do {
    const { status, body } = await post(app, 'getOrderList', { limit: 2, order: 'asc', ...(cursor && { cursor }) }, asAlice)
    t.equal(status, 200)
    for (const order of body.items) {
      t.equal(order.customerId, 'alice')
      seen.push(order.id)
    }
    cursor = body.nextCursor ?? undefined
  } while (cursor !== undefined)
  t.same(seen, aliceAsc, 'a cursor walk stays in scope and sees each order once')
})

t.test('a cursor issued to one customer shows another customer only their own orders', async t => {
  const app = await buildApp(t, { authorize: customerScope })
  for (let i = 0; i < 3; i++) {
    await createOrder(app, { customerId: 'alice' })
    await createOrder(app, { customerId: 'bob' })
  }
  const alicePage = await post(app, 'getOrderList', { limit: 1 }, { 'x-customer': 'alice' })
  const bobPage = await post(app, 'getOrderList', { limit: 10, cursor: alicePage.body.nextCursor }, { 'x-customer': 'bob' })
  t.equal(bobPage.status, 200)
  t.ok(bobPage.body.items.every((order: { customerId: string }) => order.customerId === 'bob'))
})

t.test('a customer scope forbids creating an order for another customer', async t => {
  const app = await buildApp(t, { authorize: customerScope })
  const { status, body } = await post(app, 'createOrder', orderBody({ customerId: 'bob' }), { 'x-customer': 'alice' })
  t.equal(status, 403)
  t.equal(body.code, 'ORDER_FORBIDDEN')
  t.same((await app.orders.list()).items, [])
})

t.test('a customer scope hides another customer\'s order from updateOrderStatus as 404 and leaves it unchanged', async t => {
  const app = await buildApp(t, { authorize: customerScope })
  const bobs = (await post(app, 'createOrder', orderBody({ customerId: 'bob' }), { 'x-customer': 'bob' })).body
  const { status, body } = await post(app, 'updateOrderStatus', { id: bobs.id, status: 'cancelled' }, { 'x-customer': 'alice' })
  t.equal(status, 404)
  t.equal(body.code, 'ORDER_NOT_FOUND')
  const unknown = await post(app, 'updateOrderStatus', { id: 'no-such-order', status: 'cancelled' }, { 'x-customer': 'alice' })
  t.same([unknown.status, unknown.body.code], [status, body.code], 'the same answer as for an order that does not exist')
  t.same((await app.orders.list()).items, [bobs])
})

t.test('app.orders applies a scope given in its options like the routes do', async t => {
  const app = await buildApp(t)
  const bobs = await app.orders.create(orderBody({ customerId: 'bob' }))
  const scope = { customerId: 'alice' }
  await t.rejects(app.orders.create(orderBody({ customerId: 'bob' }), { scope }), { code: 'ORDER_FORBIDDEN', statusCode: 403 })
  await t.rejects(app.orders.updateStatus({ id: bobs.id, status: 'paid' }, { scope }), { code: 'ORDER_NOT_FOUND', statusCode: 404 })
  t.same(await app.orders.list({}, { scope }), { items: [], nextCursor: null })
  t.same((await app.orders.list()).items, [bobs])
})

t.test('an error thrown by authorize reaches the client unchanged', async t => {
  const Unauthorized = createError('APP_UNAUTHORIZED', 'Sign in first', 401)
  const thrown = {
    '@fastify/error': () => { throw new Unauthorized() },
    'Error with statusCode': () => { throw Object.assign(new Error('Token expired'), { statusCode: 401, code: 'APP_TOKEN_EXPIRED' }) },
    'rejected promise': async () => { throw new Unauthorized() }
  }
  for (const [name, authorize] of Object.entries(thrown)) {
    const app = await buildApp(t, { authorize })
    for (const operation of operations) {
      const payload = operation === 'createOrder' ? orderBody() : operation === 'getOrderList' ? {} : { id: 'x', status: 'paid' }
      const { status, body } = await post(app, operation, payload)
      t.equal(status, 401, `${name}: ${operation}`)
      t.equal(body.code, name === 'Error with statusCode' ? 'APP_TOKEN_EXPIRED' : 'APP_UNAUTHORIZED')
      t.equal(body.message, name === 'Error with statusCode' ? 'Token expired' : 'Sign in first', 'the host\'s own message')
    }
    t.same((await app.orders.list()).items, [])
  }
})

// Scopes a host may give by mistake: each must fail closed, never read as "everything" nor coerced.
const badScopes: Array<[string, unknown]> = [
  ['a customerId of null (a user without a customer)', { customerId: null }],
  ['a numeric customerId', { customerId: 1234 }],
  ['an empty customerId', { customerId: '' }],
  ['a customerId of 129 characters', { customerId: 'c'.repeat(129) }],
  ['null', null],
  ['a string', 'yes'],
  ['a number', 1],
  ['an array', [{ customerId: 'cus_1' }]],
  // A claim missing from the token: { customerId: user.customerId } with no such claim.
  ['a customerId of undefined (a claim the token does not have)', { customerId: undefined }],
  ['a store of undefined next to an actor', { store: undefined, actor: 'staff_1' }],
  ['a misspelt key', { customerID: 'cus_1' }],
  ['a key the plugin does not know', { storeId: 'eu' }],
  ['a known key beside an unknown one', { customerId: 'cus_1', role: 'admin' }],
  ['an empty object', {}],
  ['an object without a prototype and without keys', Object.create(null)],
  ['a user record', { id: 'usr_1', email: 'ada@example.com', passwordHash: '$2b$12$hash' }],
  ['a Map', new Map([['customerId', 'cus_1']])],
  ['a Date', new Date()],
  ['a class instance with a customerId', new (class Session { customerId = 'cus_1' })()],
  ['a revoked Proxy', (() => { const { proxy, revoke } = Proxy.revocable({ customerId: 'cus_1' }, {}); revoke(); return proxy })()],
  ['a symbol key beside a customerId', { customerId: 'cus_1', [Symbol('role')]: 'admin' }],
  ['a numeric store', { store: 7 }],
  ['an actor with a line break', { actor: 'staff\nadmin' }]
]

t.test('authorize giving something that is not a scope fails closed: 500 ORDER_INVALID_SCOPE, nothing read or written', async t => {
  // A test each, so each app's storage is let go before the next one's is made.
  for (const [what, decision] of badScopes) {
    t.test(what, async t => {
      const { lines, stream } = logLines()
      const app = await buildApp(t, { authorize: () => decision as never }, { logger: { stream } })
      // Orders of two customers, the numeric one's twin "1234" and "23" included, stored without the routes.
      const stored = [await app.orders.create(orderBody({ customerId: 'cus_1' })), await app.orders.create(orderBody({ customerId: '1234' })),
        await app.orders.create(orderBody({ customerId: '23' }))]
      const bodies = { getOrderList: {}, createOrder: orderBody({ customerId: 'cus_1' }), updateOrderStatus: { id: stored[0]!.id, status: 'paid' } }
      for (const operation of operations) {
        for (let attempt = 0; attempt < 2; attempt++) {
          const { status, body } = await post(app, operation, bodies[operation])
          t.equal(status, 500, `${what}: ${operation}`)
          t.equal(body.code, 'ORDER_INVALID_SCOPE', `${what}: ${operation}`)
          t.match(body.message, `authorize for ${operation} gave`, 'the message says who gave what')
          t.notOk('items' in body, 'no order is listed')
        }
      }
      t.same((await app.orders.list({ order: 'asc' })).items, stored, `${what}: nothing created, nothing moved`)
      const logged = lines.filter(line => line.err?.code === 'ORDER_INVALID_SCOPE')
      t.same(logged.map(line => line.msg), operations.map(() => 'every such request answers 500 until authorize is fixed'),
        `${what}: logged once per route, not per request`)
    })
  }
})

t.test('a user record returned as the scope is echoed nowhere: the body names the rule, the log the route and the shape', async t => {
  // A common slip: the user record itself, with a numeric customer id, an email, a hash and a token.
  const user = { customerId: 42, email: 'ada@example.com', passwordHash: '$2b$12$Q9xLKhO3hash', apiToken: 'tok_live_5f3a9c' }
  const values = ['42', user.email, user.passwordHash, user.apiToken, 'ada', 'tok_live']
  const { lines, stream } = logLines()
  const app = await buildApp(t, { authorize: () => user as never }, { logger: { stream } })
  for (const operation of operations) {
    const body = { getOrderList: {}, createOrder: orderBody(), updateOrderStatus: { id: 'ord_1', status: 'paid' } }[operation]
    const { status, body: answer } = await post(app, operation, body)
    t.equal(status, 500)
    t.same(answer, {
      statusCode: 500,
      code: 'ORDER_INVALID_SCOPE',
      error: 'Internal Server Error',
      message: `fastify-order: authorize for ${operation} gave a scope that breaks a rule: customerId must be a string of 1 to 128 characters`
    })
  }
  await t.rejects(app.orders.list({}, { scope: user as never }), { message: 'fastify-order: the scope option of app.orders.list gave a scope that breaks a rule: customerId must be a string of 1 to 128 characters' })
  const logged = lines.filter(line => line.err?.code === 'ORDER_INVALID_SCOPE')
  t.same(logged.map(line => [line.route, line.scopeShape]), operations.map(operation =>
    [`/order/${operation}`, '{ "customerId": number, "email": string, "passwordHash": string, "apiToken": string }']))
  const everything = JSON.stringify(lines)
  for (const value of values.slice(1)) t.notOk(everything.includes(value), `${value} is in no log line`)
  t.notOk(/\b42\b/.test(JSON.stringify(logged)), 'not even the numeric id')
})

t.test('a scope that is a plain object with known keys keeps working: customerId of 1 to 128 characters, store, actor', async t => {
  for (const scope of [{ customerId: 'c'.repeat(128) }, { customerId: '😀'.repeat(128) }, { store: 'eu', actor: 'staff_1' },
    Object.assign(Object.create(null), { actor: 'job:nightly' })]) {
    const app = await buildApp(t, { authorize: () => scope })
    t.equal((await post(app, 'createOrder', orderBody({ customerId: scope.customerId ?? 'cus_1' }))).status, 201, JSON.stringify(scope).slice(0, 30))
  }
})

t.test('a bad scope names only the rule it broke, and the log only its shape', async t => {
  const rules: Array<[unknown, string, string]> = [
    [{ customerId: undefined }, 'customerId must be a string of 1 to 128 characters', '{ "customerId": undefined }'],
    [{ customerID: 'cus_secret' }, 'it may have no key other than customerId, store and actor', '{ "customerID": string }'],
    [{}, 'it must have at least one of customerId, store and actor; return true, never an object, to allow everything', '{}'],
    [new Map([['customerId', 'cus_secret']]), 'it must be a plain object { customerId, store, actor }, not an array, a Map, a Date or a class instance', 'an instance of Map'],
    [{ customerId: ['cus_secret'], roles: null }, 'customerId must be a string of 1 to 128 characters', '{ "customerId": array, "roles": null }'],
    [Object.create(Object.create(null)), 'it must be a plain object { customerId, store, actor }, not an array, a Map, a Date or a class instance', 'an object with another prototype']
  ]
  for (const [scope, rule, shape] of rules) {
    const { lines, stream } = logLines()
    const app = await buildApp(t, { authorize: () => scope as never }, { logger: { stream } })
    const { body } = await post(app, 'getOrderList', {})
    t.equal(body.message, `fastify-order: authorize for getOrderList gave a scope that breaks a rule: ${rule}`)
    t.same(lines.filter(line => line.err?.code === 'ORDER_INVALID_SCOPE').map(line => line.scopeShape), [shape])
    t.notOk(JSON.stringify(lines).includes('cus_secret'), 'no value in the log')
  }
})

t.test('app.orders throws ORDER_INVALID_SCOPE for a scope option that is not a scope, before reading or writing', async t => {
  const app = await buildApp(t)
  const order = await app.orders.create(orderBody({ customerId: '1234' }))
  for (const [what, scope] of badScopes.filter(([, scope]) => scope !== null && typeof scope === 'object')) {
    const options = { scope: scope as never }
    await t.rejects(app.orders.list({}, options), { code: 'ORDER_INVALID_SCOPE', message: /the scope option of app.orders.list gave/ }, what)
    await t.rejects(app.orders.create(orderBody({ customerId: '1234' }), options), { code: 'ORDER_INVALID_SCOPE' }, what)
    await t.rejects(app.orders.updateStatus({ id: order.id, status: 'paid' }, options), { code: 'ORDER_INVALID_SCOPE' }, what)
  }
  t.same((await app.orders.list()).items, [order], 'nothing created, nothing moved')
})

t.test('onRequest and preHandler hooks, as functions or arrays, run for each of the three routes', async t => {
  for (const form of ['function', 'array'] as const) {
    const seen: string[] = []
    const onRequest: onRequestHookHandler = async (request) => { seen.push(`onRequest ${request.url}`) }
    const preHandler: preHandlerHookHandler = async (request) => { seen.push(`preHandler ${request.url}`) }
    const second: preHandlerHookHandler = (request, reply, done) => { seen.push(`second ${request.url}`); done() }
    const hooks = form === 'function'
      ? { onRequest, preHandler }
      : { onRequest: [onRequest], preHandler: [preHandler, second] }
    const app = await buildApp(t, { hooks })
    const order = await createOrder(app)
    await post(app, 'getOrderList', {})
    await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
    const expected = ['/order/createOrder', '/order/getOrderList', '/order/updateOrderStatus'].flatMap(url =>
      form === 'function'
        ? [`onRequest ${url}`, `preHandler ${url}`]
        : [`onRequest ${url}`, `preHandler ${url}`, `second ${url}`])
    t.same(seen, expected, `${form} form`)
  }
})

t.test('hooks do not run for a route the host adds beside the plugin', async t => {
  let calls = 0
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { hooks: { onRequest: async () => { calls++ }, preHandler: async () => { calls++ } } })
  app.get('/health', async () => ({ ok: true }))
  await app.ready()
  const health = await app.inject({ method: 'GET', url: '/health' })
  t.equal(health.statusCode, 200)
  t.equal(calls, 0)
  await post(app, 'getOrderList', {})
  t.equal(calls, 2)
})

t.test('a hook can reject a request before the order module runs', async t => {
  const app = await buildApp(t, {
    hooks: {
      onRequest: async (request, reply) => {
        if (request.headers.authorization !== 'Bearer good') return reply.code(401).send({ statusCode: 401, code: 'APP_UNAUTHORIZED', error: 'Unauthorized', message: 'Sign in first' })
      }
    }
  })
  for (const operation of operations) {
    const { status, body } = await post(app, operation, operation === 'createOrder' ? orderBody() : {})
    t.equal(status, 401, operation)
    t.equal(body.code, 'APP_UNAUTHORIZED')
  }
  t.same((await app.orders.list()).items, [])
  const allowed = await post(app, 'createOrder', orderBody(), { authorization: 'Bearer good' })
  t.equal(allowed.status, 201)
})

t.test('a preHandler hook that throws stops the request with its error', async t => {
  const Unauthorized = createError('APP_UNAUTHORIZED', 'Sign in first', 401)
  const app = await buildApp(t, { hooks: { preHandler: async () => { throw new Unauthorized() } } })
  const { status, body } = await post(app, 'createOrder', orderBody())
  t.equal(status, 401)
  t.equal(body.code, 'APP_UNAUTHORIZED')
  t.same((await app.orders.list()).items, [])
})

t.test('a host error without a code keeps its status and message, whatever status it has', async t => {
  for (const statusCode of [400, 403, 404, 409, 422, 503]) {
    // http-errors, and so @fastify/sensible, make errors like this one: a status, no code.
    const app = await buildApp(t, { authorize: () => { throw Object.assign(new Error('Go away'), { statusCode }) } })
    for (const operation of operations) {
      const payload = operation === 'createOrder' ? orderBody() : operation === 'getOrderList' ? {} : { id: 'x', status: 'paid' }
      const { status, body } = await post(app, operation, payload)
      t.equal(status, statusCode, `${statusCode} from ${operation}`)
      t.equal(body.message, 'Go away')
    }
  }
})

t.test('a hook that replies with its own error body keeps its status', async t => {
  const app = await buildApp(t, {
    hooks: { preHandler: async (request, reply) => reply.code(403).send({ message: 'Account suspended' }) }
  })
  for (const operation of operations) {
    const payload = operation === 'createOrder' ? orderBody() : operation === 'getOrderList' ? {} : { id: 'x', status: 'paid' }
    const { status, body } = await post(app, operation, payload)
    t.equal(status, 403, operation)
    t.equal(body.message, 'Account suspended')
  }
  t.same((await app.orders.list()).items, [])
})
