// The workflow explains itself: a status it does not have lists the statuses, a forbidden move says where the order may go.
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { Shipping } from '../custom-field-schemas.js'
import { buildApp, createOrder, orderBody, post, testStorage } from '../helper.js'

const STATUSES = 'pending, paid, shipped, delivered, cancelled, refunded'

t.test('a status the workflow does not have is a 400 that lists the statuses once, in a move and in a filter', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  const cases: Array<[string, unknown, string]> = [
    ['updateOrderStatus', { id: order.id, status: 'payed' }, `body/status must be one of: ${STATUSES}`],
    ['getOrderList', { filter: { status: 'payed' } }, `body/filter/status must be one of: ${STATUSES}`],
    ['getOrderList', { filter: { status: ['paid', 'payed'] } }, `body/filter/status/1 must be one of: ${STATUSES}`],
    ['getOrderList', { filter: { status: 7 } }, 'body/filter/status must be string or array'],
    ['getOrderList', { filter: { status: [] } }, 'body/filter/status must NOT have fewer than 1 items']
  ]
  for (const [route, body, message] of cases) {
    t.same((await post(app, route, body)).body, { statusCode: 400, code: 'FST_ERR_VALIDATION', error: 'Bad Request', message }, JSON.stringify(body))
  }
})

t.test('app.orders names what is wrong without "body/", which it does not have', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  await t.rejects(app.orders.updateStatus({ id: order.id, status: 'payed' }), { code: 'FST_ERR_VALIDATION', message: `status must be one of: ${STATUSES}` })
  await t.rejects(app.orders.list({ filter: { status: 'payed' } }), { code: 'FST_ERR_VALIDATION', message: `filter/status must be one of: ${STATUSES}` })
  await t.rejects(app.orders.create({ ...orderBody(), total: 1 } as never), { code: 'FST_ERR_VALIDATION', message: 'input must NOT have additional property "total"' })
  await t.rejects(app.orders.list(null as never), { code: 'FST_ERR_VALIDATION', message: 'query must be object' })
})

t.test('app.orders words the custom fields a patch would leave wrong without "body/" too', async t => {
  const storage = await testStorage(t)
  // An order stored before the option: a patch must give it the required address.
  const before = await createOrder(await buildApp(t, { storage }))
  const app = await buildApp(t, { storage, customFields: { order: Shipping } })
  await t.rejects(app.orders.updateStatus({ id: before.id, status: 'paid', customFields: { trackingNumber: 'T' } } as never), {
    code: 'FST_ERR_VALIDATION',
    message: 'customFields must have required property \'address\''
  })
  t.match((await post(app, 'updateOrderStatus', { id: before.id, status: 'paid', customFields: { trackingNumber: 'T' } })).body, { message: 'body/customFields must have required property \'address\'' })
})

t.test('allowed values that are not strings are listed as JSON', async t => {
  const app = await buildApp(t, { customFields: { order: Type.Object({ parcels: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2)])) }) } })
  t.match((await post(app, 'createOrder', { ...orderBody(), customFields: { parcels: 3 } })).body, { statusCode: 400, message: 'body/customFields/parcels must be one of: 1, 2' })
})

t.test('a forbidden move is a 409 that names both statuses and says where the order may go, or that its status is final', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  t.same((await post(app, 'updateOrderStatus', { id: order.id, status: 'pending' })).body, {
    statusCode: 409,
    code: 'ORDER_INVALID_TRANSITION',
    error: 'Conflict',
    message: 'Cannot move an order from "paid" to "pending": from "paid" an order may move to shipped, cancelled or refunded'
  })
  await post(app, 'updateOrderStatus', { id: order.id, status: 'refunded' })
  await t.rejects(app.orders.updateStatus({ id: order.id, status: 'paid' }), {
    code: 'ORDER_INVALID_TRANSITION',
    message: 'Cannot move an order from "refunded" to "paid": from "refunded" an order may move nowhere: refunded is final'
  })
  const delivered = await createOrder(app)
  for (const status of ['paid', 'shipped', 'delivered']) await post(app, 'updateOrderStatus', { id: delivered.id, status })
  t.match((await post(app, 'updateOrderStatus', { id: delivered.id, status: 'cancelled' })).body, { message: /from "delivered" an order may move to refunded$/ })
})

t.test('an order in a status a changed workflow no longer has says so when it cannot move', async t => {
  const storage = await testStorage(t)
  const before = await buildApp(t, { storage, workflow: { initial: 'new', transitions: { new: ['held', 'done'], held: ['done'], done: [] } } })
  const order = await before.orders.create(orderBody())
  await before.orders.updateStatus({ id: order.id, status: 'held' })
  const after = await buildApp(t, { storage, workflow: { initial: 'new', transitions: { new: ['done'], done: [] } } })
  await t.rejects(after.orders.updateStatus({ id: order.id, status: 'done' }), {
    code: 'ORDER_INVALID_TRANSITION',
    message: 'Cannot move an order from "held" to "done": "held" is not a status of the workflow'
  })
})
