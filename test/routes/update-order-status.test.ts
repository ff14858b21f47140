import t from 'tap'
import { buildApp, createOrder, post } from '../helper.js'

t.test('a move the workflow allows sets the status, bumps the version and appends history', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid', reason: 'card captured' })
  t.equal(status, 200)
  t.equal(body.status, 'paid')
  t.equal(body.version, 2)
  t.ok(body.updatedAt >= order.updatedAt)
  t.same(body.statusHistory, [
    { status: 'pending', at: order.createdAt },
    { status: 'paid', at: body.updatedAt, reason: 'card captured' }
  ])
  t.same(body.createdAt, order.createdAt)
  t.same(body.items, order.items)

  const stored = (await post(app, 'getOrderList', { filter: { ids: [order.id] } })).body.items[0]
  t.same(stored, body, 'the stored order is the one returned')
})

t.test('an unknown id is 404 ORDER_NOT_FOUND', async t => {
  const app = await buildApp(t)
  const { status, body } = await post(app, 'updateOrderStatus', { id: 'ord_missing', status: 'paid' })
  t.equal(status, 404)
  t.equal(body.code, 'ORDER_NOT_FOUND')
})

t.test('a status outside the workflow is a 400', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'lost' })
  t.equal(status, 400)
  t.equal(body.code, 'FST_ERR_VALIDATION')
})

t.test('a forbidden move is 409 ORDER_INVALID_TRANSITION naming both statuses, and changes nothing', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'delivered' })
  t.equal(status, 409)
  t.equal(body.code, 'ORDER_INVALID_TRANSITION')
  t.match(body.message, /pending/)
  t.match(body.message, /delivered/)
  t.same((await post(app, 'getOrderList', {})).body.items[0], order)
})

t.test('moving to the current status is a harmless no-op', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  const paid = (await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })).body
  const retried = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  t.equal(retried.status, 200)
  t.same(retried.body, paid, 'same version, no new history entry')
})

t.test('a stale expectedVersion is 409 ORDER_VERSION_CONFLICT and changes nothing', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  const paid = (await post(app, 'updateOrderStatus', { id: order.id, status: 'paid', expectedVersion: 1 })).body
  t.equal(paid.version, 2)
  const stale = await post(app, 'updateOrderStatus', { id: order.id, status: 'shipped', expectedVersion: 1 })
  t.equal(stale.status, 409)
  t.equal(stale.body.code, 'ORDER_VERSION_CONFLICT')
  // The version check comes before the no-op rule.
  const staleNoop = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid', expectedVersion: 1 })
  t.equal(staleNoop.status, 409)
  t.equal(staleNoop.body.code, 'ORDER_VERSION_CONFLICT')
  t.same((await post(app, 'getOrderList', {})).body.items[0], paid)
})

t.test('expectedVersion and reason are checked by the schema', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  for (const body of [
    { id: order.id, status: 'paid', expectedVersion: 0 },
    { id: order.id, status: 'paid', expectedVersion: 2_147_483_648 },
    { id: order.id, status: 'paid', expectedVersion: '1' },
    { id: order.id, status: 'paid', reason: 'r'.repeat(501) },
    { id: order.id },
    { status: 'paid' },
    { id: order.id, status: 'paid', version: 1 }
  ]) {
    const response = await post(app, 'updateOrderStatus', body)
    t.equal(response.status, 400, JSON.stringify(body).slice(0, 80))
  }
})

t.test('a walk through the default workflow keeps version equal to the history length', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  let latest = order
  for (const status of ['paid', 'shipped', 'delivered', 'refunded']) {
    latest = (await post(app, 'updateOrderStatus', { id: order.id, status })).body
    t.equal(latest.status, status)
    t.equal(latest.version, latest.statusHistory.length)
  }
  t.same(latest.statusHistory.map((change: { status: string }) => change.status), ['pending', 'paid', 'shipped', 'delivered', 'refunded'])
  const after = await post(app, 'updateOrderStatus', { id: order.id, status: 'cancelled' })
  t.equal(after.body.code, 'ORDER_INVALID_TRANSITION', 'refunded is final')
})
