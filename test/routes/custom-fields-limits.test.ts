// Custom-field values no storage could keep or no reader could serve are a 400 before anything is stored.
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { MAX_CUSTOM_FIELD_DEPTH } from '../../lib/custom-fields/value-check.js'
import type { OrderEvent } from '../../lib/index.js'
import { buildApp, eventually, orderBody, post } from '../helper.js'

// Free JSON, as a host that keeps a payload of its own would allow.
const customFields = {
  order: Type.Object({ payload: Type.Optional(Type.Unknown()) }, { additionalProperties: true }),
  item: Type.Object({}, { additionalProperties: true })
}

/** An object whose nesting, counting itself, is `levels` deep: { a: { a: … } }. */
function nested (levels: number): Record<string, unknown> {
  const root: Record<string, unknown> = {}
  let current = root
  for (let level = 1; level < levels; level++) current = (current.a = {}) as Record<string, unknown>
  return root
}

t.test(`custom fields nest at most ${MAX_CUSTOM_FIELD_DEPTH} levels: deeper is a 400 and nothing is stored, with or without a key`, async t => {
  t.equal(MAX_CUSTOM_FIELD_DEPTH, 32)
  const app = await buildApp(t, { customFields })
  const deep = orderBody({ customFields: nested(33) } as never)
  for (const headers of [{}, { 'idempotency-key': 'deep-1' }] as Array<Record<string, string>>) {
    const { status, body } = await post(app, 'createOrder', deep, headers)
    t.equal(status, 400, JSON.stringify(headers))
    t.same(body, { statusCode: 400, code: 'FST_ERR_VALIDATION', error: 'Bad Request', message: 'body/customFields must not nest more than 32 levels deep' })
  }
  const deepItem = orderBody({ items: [{ sku: 'A-1', quantity: 1, unitPrice: 1, customFields: nested(33) }] } as never)
  t.equal((await post(app, 'createOrder', deepItem)).body.message, 'body/items/0/customFields must not nest more than 32 levels deep')
  // A body of 10 KB nested 5,000 deep, which would exhaust a recursive walk.
  const payload = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`
  const huge = `{"customerId":"cus_1","currency":"EUR","items":[{"sku":"A-1","quantity":1,"unitPrice":1}],"customFields":{"payload":${payload}}}`
  const response = await app.inject({ method: 'POST', url: '/order/createOrder', headers: { 'content-type': 'application/json' }, payload: huge })
  t.equal(response.statusCode, 400)
  t.same((await app.orders.list()).items, [], 'nothing stored')
  t.same((await app.orders.listEvents()).items, [], 'no event')

  const { status, body: order } = await post(app, 'createOrder', orderBody({ customFields: nested(32) } as never), { 'idempotency-key': 'deep-1' })
  t.equal(status, 201, 'exactly 32 levels is fine, and the key a refused request sent is free')
  t.same(order.customFields, nested(32))
})

t.test('a body or an item that is not an object is the schema\'s to refuse', async t => {
  const app = await buildApp(t, { customFields })
  const string = await app.inject({ method: 'POST', url: '/order/createOrder', headers: { 'content-type': 'application/json' }, payload: '"order"' })
  t.equal(string.json().message, 'body must be object')
  const { status, body } = await post(app, 'createOrder', { ...orderBody(), items: ['A-1', null] })
  t.equal(status, 400)
  t.equal(body.message, 'body/items/0 must be object')
})

t.test('a patch nesting too deep is a 400 and leaves the order as it was', async t => {
  const app = await buildApp(t, { customFields })
  const order = await app.orders.create(orderBody())
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid', customFields: { payload: nested(32) } })
  t.equal(status, 400)
  t.equal(body.message, 'body/customFields must not nest more than 32 levels deep', 'the patch object is the first level')
  t.same(await app.orders.list(), { items: [order], nextCursor: null })
})

t.test('app.orders refuses values that are not JSON, and cycles, as validation errors naming the path without body/', async t => {
  const app = await buildApp(t, { customFields })
  const cycle: Record<string, unknown> = { name: 'loop' }
  cycle.self = cycle
  const cases: Array<[unknown, RegExp]> = [
    [{ payload: 10n }, /^customFields\/payload must be a JSON value, not a bigint$/],
    [{ payload: { when: () => 1 } }, /^customFields\/payload\/when must be a JSON value, not a function$/],
    [{ payload: [Number.NaN] }, /^customFields\/payload\/0 must be a JSON value, not NaN$/],
    [{ 'a/b~c': Symbol('s') }, /^customFields\/a~1b~0c must be a JSON value, not a symbol$/],
    [{ payload: cycle }, /^customFields must not nest more than 32 levels deep$/]
  ]
  for (const [fields, message] of cases) {
    await t.rejects(app.orders.create(orderBody({ customFields: fields } as never)), { code: 'FST_ERR_VALIDATION', statusCode: 400, message })
  }
  t.same((await app.orders.list()).items, [], 'nothing stored')
})

t.test('a subscription delivers every order the plugin stored, the deepest allowed included', async t => {
  const app = await buildApp(t, { customFields })
  const delivered: OrderEvent[] = []
  app.orders.subscribe('all', async event => { delivered.push(event) }, { from: 'start' })
  await app.ready()
  await post(app, 'createOrder', orderBody({ customFields: nested(33) } as never))
  const first = await app.orders.create(orderBody({ customFields: nested(32) } as never))
  const second = await app.orders.create(orderBody())
  await eventually('both orders are delivered', () => delivered.length === 2)
  t.same(delivered.map(event => event.order.id), [first.id, second.id], 'in order, none stuck')
})
