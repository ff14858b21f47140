import t from 'tap'
import Fastify from 'fastify'
import orderPlugin, { type Order } from '../../lib/index.js'
import { buildApp, orderBody, post } from '../helper.js'

t.test('createOrder returns 201 with the order the server computed', async t => {
  const app = await buildApp(t)
  const { status, body } = await post(app, 'createOrder', orderBody({
    items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }, { sku: 'B-2', quantity: 3, unitPrice: 99 }]
  }))
  t.equal(status, 201)
  t.match(body, {
    customerId: 'cus_42',
    status: 'pending',
    currency: 'EUR',
    total: 2 * 1250 + 3 * 99,
    metadata: { channel: 'web' },
    version: 1,
    statusHistory: [{ status: 'pending', at: body.createdAt }]
  })
  t.type(body.id, 'string')
  t.equal(body.createdAt, body.updatedAt)
  t.equal(new Date(body.createdAt).toISOString(), body.createdAt, 'ISO 8601 UTC with milliseconds')
  t.same(body.items[1], { sku: 'B-2', quantity: 3, unitPrice: 99 }, 'name stays optional')
})

t.test('every order gets its own unguessable id', async t => {
  const app = await buildApp(t)
  const ids = new Set<string>()
  for (let i = 0; i < 20; i++) ids.add((await post(app, 'createOrder', orderBody())).body.id)
  t.equal(ids.size, 20)
  for (const id of ids) t.ok(id.length >= 32, 'long enough not to be guessed')
})

t.test('metadata is {} when none was given', async t => {
  const app = await buildApp(t)
  const { body } = await post(app, 'createOrder', { customerId: 'c', currency: 'USD', items: [{ sku: 's', quantity: 1, unitPrice: 0 }] })
  t.same(body.metadata, {})
  t.equal(body.total, 0)
})

t.test('fields the client may not set are rejected like any unknown property', async t => {
  const app = await buildApp(t)
  for (const field of ['id', 'status', 'total', 'version', 'createdAt', 'updatedAt', 'statusHistory', 'cutomerId']) {
    const { status, body } = await post(app, 'createOrder', { ...orderBody(), [field]: 'x' })
    t.equal(status, 400, field)
    t.equal(body.code, 'FST_ERR_VALIDATION', field)
  }
  t.same((await post(app, 'getOrderList', {})).body.items, [], 'nothing was stored')
})

t.test('a body that breaks a field rule is a 400', async t => {
  const app = await buildApp(t)
  const item = { sku: 'A-1', quantity: 1, unitPrice: 1 }
  const cases: Array<[string, unknown]> = [
    ['empty customerId', orderBody({ customerId: '' })],
    ['customerId of 129 characters', orderBody({ customerId: 'c'.repeat(129) })],
    ['lower-case currency', orderBody({ currency: 'eur' })],
    ['four-letter currency', orderBody({ currency: 'EURO' })],
    ['no items', orderBody({ items: [] })],
    ['101 items', orderBody({ items: Array.from({ length: 101 }, () => item) })],
    ['empty sku', orderBody({ items: [{ ...item, sku: '' }] })],
    ['sku of 65 characters', orderBody({ items: [{ ...item, sku: 's'.repeat(65) }] })],
    ['empty name', orderBody({ items: [{ ...item, name: '' }] })],
    ['name of 201 characters', orderBody({ items: [{ ...item, name: 'n'.repeat(201) }] })],
    ['quantity 0', orderBody({ items: [{ ...item, quantity: 0 }] })],
    ['quantity above a million', orderBody({ items: [{ ...item, quantity: 1_000_001 }] })],
    ['fractional quantity', orderBody({ items: [{ ...item, quantity: 1.5 }] })],
    ['negative unitPrice', orderBody({ items: [{ ...item, unitPrice: -1 }] })],
    ['unitPrice above 1e12', orderBody({ items: [{ ...item, unitPrice: 1e12 + 1 }] })],
    ['float unitPrice', orderBody({ items: [{ ...item, unitPrice: 12.5 }] })],
    ['unknown item property', orderBody({ items: [{ ...item, price: 1 } as never] })],
    ['51 metadata keys', orderBody({ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) })],
    ['empty metadata key', orderBody({ metadata: { '': 'v' } })],
    ['metadata key of 41 characters', orderBody({ metadata: { ['k'.repeat(41)]: 'v' } })],
    ['metadata value of 501 characters', orderBody({ metadata: { k: 'v'.repeat(501) } })],
    ['number metadata value', orderBody({ metadata: { k: 1 as never } })],
    ['"2" for a quantity', orderBody({ items: [{ ...item, quantity: '2' as never }] })],
    ['null for a string', orderBody({ customerId: null as never })],
    ['true for a number', orderBody({ items: [{ ...item, unitPrice: true as never }] })]
  ]
  for (const [name, payload] of cases) {
    const { status, body } = await post(app, 'createOrder', payload)
    t.equal(status, 400, name)
    t.equal(body.code, 'FST_ERR_VALIDATION', name)
  }
})

t.test('the limits at their edges are accepted', async t => {
  const app = await buildApp(t)
  const { status, body } = await post(app, 'createOrder', {
    customerId: 'c'.repeat(128),
    currency: 'JPY',
    items: Array.from({ length: 100 }, (_, i) => ({ sku: 's'.repeat(64), name: `${i}`.padEnd(200, 'n'), quantity: 1_000_000, unitPrice: 0 })),
    metadata: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${i}`.padEnd(40, 'k'), 'v'.repeat(500)]))
  })
  t.equal(status, 201)
  t.equal(body.items.length, 100)
})

t.test('a total above Number.MAX_SAFE_INTEGER is a 400, never a wrong number', async t => {
  const app = await buildApp(t)
  const line = { sku: 'A', quantity: 1_000_000, unitPrice: 1e12 }
  const single = await post(app, 'createOrder', orderBody({ items: [line] }))
  t.equal(single.status, 400)
  t.equal(single.body.code, 'ORDER_TOTAL_TOO_LARGE')

  // Each line is safe; their sum is not.
  const quarter = { sku: 'B', quantity: 1_000_000, unitPrice: 3_000_000_000 }
  const sum = await post(app, 'createOrder', orderBody({ items: [quarter, quarter, quarter, quarter] }))
  t.equal(sum.status, 400)
  t.equal(sum.body.code, 'ORDER_TOTAL_TOO_LARGE')

  const exact = await post(app, 'createOrder', orderBody({ items: [{ sku: 'C', quantity: 9007, unitPrice: 199254740991 }, { sku: 'D', quantity: 1, unitPrice: 0 }] }))
  t.equal(exact.status, 201)
  t.equal(exact.body.total, 9007 * 199254740991)
  t.same((await post(app, 'getOrderList', {})).body.items.length, 1, 'only the valid order was stored')
})

t.test('maxItems tightens the items limit', async t => {
  const app = await buildApp(t, { maxItems: 2 })
  const item = { sku: 'A', quantity: 1, unitPrice: 1 }
  t.equal((await post(app, 'createOrder', orderBody({ items: [item, item] }))).status, 201)
  const { status, body } = await post(app, 'createOrder', orderBody({ items: [item, item, item] }))
  t.equal(status, 400)
  t.equal(body.code, 'FST_ERR_VALIDATION')
})

t.test('a field not in the order shape never leaks from the storage', async t => {
  const { memoryStorage } = await import('../../lib/index.js')
  const storage = memoryStorage()
  const app = await buildApp(t, {
    storage: {
      ...storage,
      get: async (id) => {
        const order = await storage.get(id)
        return order && { ...order, secret: 'hidden', items: order.items.map(item => ({ ...item, cost: 1 })) }
      }
    }
  })
  const order = (await post(app, 'createOrder', orderBody())).body
  const { body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'pending' })
  t.notOk('secret' in body)
  t.notOk('cost' in body.items[0])
})

t.test('a host\'s preSerialization and onSend hooks see each order answer: the order, then its JSON', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  const seen: Array<[string, unknown]> = []
  app.addHook('preSerialization', async (request, _reply, payload) => {
    seen.push([request.url, (payload as Order).status])
    return payload
  })
  app.addHook('onSend', async (request, reply, payload) => {
    seen.push([request.url, `${reply.getHeader('content-type') as string} ${typeof payload}`])
    return payload
  })
  await app.register(orderPlugin, { changes: { route: true } })
  const created = await post(app, 'createOrder', orderBody())
  t.equal(created.status, 201)
  const moved = await post(app, 'updateOrderStatus', { id: created.body.id, status: 'paid' })
  const changed = await post(app, 'changeOrder', { id: created.body.id, actions: [{ type: 'recordPayment', amount: 100, reference: 'pi_1' }] })
  t.match([moved.body, changed.body], [{ status: 'paid', version: 2 }, { paid: 100, version: 3 }])
  const json = 'application/json; charset=utf-8 string'
  t.same(seen, [
    ['/order/createOrder', 'pending'], ['/order/createOrder', json],
    ['/order/updateOrderStatus', 'paid'], ['/order/updateOrderStatus', json],
    ['/order/changeOrder', 'paid'], ['/order/changeOrder', json]
  ])
})
