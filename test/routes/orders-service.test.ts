import t from 'tap'
import { codes, type OrderMove, type Order } from '../../lib/index.js'
import { buildApp, orderBody, post } from '../helper.js'

t.test('app.orders creates, lists and moves orders without HTTP', async t => {
  const app = await buildApp(t)
  const order = await app.orders.create(orderBody())
  t.equal(order.status, 'pending')
  t.equal(order.total, 2500)
  const page = await app.orders.list({ filter: { customerId: 'cus_42' } })
  t.same(page, { items: [order], nextCursor: null })
  t.same(await app.orders.list(), page, 'the query is optional')
  const other = await app.orders.create(orderBody({ customerId: 'cus_7' }))
  t.same((await app.orders.list({ filter: { customerId: undefined, status: undefined } })).items, [other, order], 'a filter left undefined does not filter')
  const paid = await app.orders.updateStatus({ id: order.id, status: 'paid' })
  t.equal(paid.version, 2)
  t.same((await post(app, 'getOrderList', {})).body.items[1], paid, 'routes and app.orders share one store')
})

t.test('app.orders.get finds one order by id in the caller\'s scope, or throws ORDER_NOT_FOUND', async t => {
  const app = await buildApp(t, { changes: true })
  const order = await app.orders.create(orderBody({ store: 'eu' }))
  const found = await app.orders.get(order.id)
  t.same(found, order)
  t.ok(Object.isFrozen(found), 'frozen, as every order app.orders hands out')
  t.same(await app.orders.get(order.id, { scope: { customerId: 'cus_42', store: 'eu' } }), order, 'in scope')
  await t.rejects(app.orders.get(order.id, { scope: { customerId: 'cus_7' } }), { code: 'ORDER_NOT_FOUND', statusCode: 404 }, 'another customer\'s order is not found')
  await t.rejects(app.orders.get(order.id, { scope: { store: 'us' } }), { code: 'ORDER_NOT_FOUND' }, 'nor another store\'s')
  for (const id of ['ord_unknown', '', 'x'.repeat(129)]) await t.rejects(app.orders.get(id), { code: 'ORDER_NOT_FOUND' }, JSON.stringify(id).slice(0, 20))
  await t.rejects(app.orders.get(42 as unknown as string), { code: 'FST_ERR_VALIDATION', message: 'id must be string' })
  await t.rejects(app.orders.get(order.id, { scope: { customerId: 7 } as never }), { code: 'ORDER_INVALID_SCOPE' })
  await app.orders.change({ id: order.id, actions: [{ type: 'recordPayment', amount: 100, reference: 'pi_1' }] })
  t.match(await app.orders.get(order.id), { version: 2, paid: 100 }, 'as now stored')
})

t.test('app.orders applies the same validation as the routes', async t => {
  const app = await buildApp(t)
  const invalid: Array<() => Promise<unknown>> = [
    () => app.orders.create({ ...orderBody(), total: 1 } as never),
    () => app.orders.create(orderBody({ items: [{ sku: 'A', quantity: '2' as never, unitPrice: 1 }] })),
    () => app.orders.list({ limit: 101 }),
    () => app.orders.list({ filter: { createdFrom: '2016-12-31T23:59:60Z' } }),
    () => app.orders.updateStatus({ id: 'x', status: 'lost' })
  ]
  for (const call of invalid) {
    await t.rejects(call, { code: 'FST_ERR_VALIDATION', statusCode: 400 })
  }
  await t.rejects(app.orders.create({ ...orderBody(), total: 1 } as never), codes.FST_ERR_VALIDATION)
})

t.test('app.orders raises the same errors as the routes', async t => {
  const app = await buildApp(t)
  const order = await app.orders.create(orderBody())
  await t.rejects(app.orders.updateStatus({ id: 'nope', status: 'paid' }), { code: 'ORDER_NOT_FOUND', statusCode: 404 })
  await t.rejects(app.orders.updateStatus({ id: order.id, status: 'shipped' }), { code: 'ORDER_INVALID_TRANSITION', statusCode: 409 })
  await t.rejects(app.orders.updateStatus({ id: order.id, status: 'paid', expectedVersion: 3 }), { code: 'ORDER_VERSION_CONFLICT', statusCode: 409 })
  await t.rejects(app.orders.list({ cursor: 'abc' }), { code: 'ORDER_INVALID_CURSOR', statusCode: 400 })
  await t.rejects(app.orders.create(orderBody({ customerId: 'other' }), { scope: { customerId: 'cus_42' } }), { code: 'ORDER_FORBIDDEN', statusCode: 403 })
  await t.rejects(app.orders.updateStatus({ id: order.id, status: 'paid' }, { scope: { customerId: 'other' } }), { code: 'ORDER_NOT_FOUND' })
  t.same((await app.orders.list({}, { scope: { customerId: 'other' } })).items, [])
})

t.test('a date-time the format allows but a Date cannot hold is a 400 from the route too', async t => {
  const app = await buildApp(t)
  const { status, body } = await post(app, 'getOrderList', { filter: { createdTo: '2016-12-31T23:59:60Z' } })
  t.equal(status, 400)
  t.equal(body.code, 'FST_ERR_VALIDATION')
  const far = await post(app, 'getOrderList', { filter: { createdFrom: '0000-01-01T00:00:00Z', createdTo: '9999-12-31T23:59:59-14:00' } })
  t.equal(far.status, 200, 'dates past year 9999 after the offset still compare')
})

t.test('orders handed to host code cannot be changed behind the store\'s back', async t => {
  const app = await buildApp(t)
  const payloads: unknown[] = []
  app.orders.on('created', order => { payloads.push(order) })
  app.orders.on('statusChanged', event => { payloads.push(event, event.order) })
  const order = await app.orders.create(orderBody())
  t.throws(() => { (order as { status: string }).status = 'paid' })
  t.throws(() => { order.items[0]!.quantity = 100 })
  t.throws(() => { order.metadata.channel = 'shop' })
  t.throws(() => { (order.statusHistory as unknown[]).push({}) })
  const paid = await app.orders.updateStatus({ id: order.id, status: 'paid' })
  t.throws(() => { (paid as { version: number }).version = 1 })
  for (const round of ['first', 'second']) {
    const page = await app.orders.list()
    t.ok(page.items.every(item => Object.isFrozen(item) && Object.isFrozen(item.items)), `listed orders are frozen (${round} read)`)
  }
  t.ok(payloads.every(payload => Object.isFrozen(payload)), 'listeners get frozen values')
  const { body } = await post(app, 'getOrderList', {})
  t.match(body.items[0], { status: 'paid', version: 2, items: [{ quantity: 2 }], metadata: { channel: 'web' } })
})

t.test('listeners run after the change is stored and before the response is sent', async t => {
  const app = await buildApp(t)
  const seen: string[] = []
  app.orders
    .on('created', async (order: Order) => {
      const stored = await app.orders.list({ filter: { ids: [order.id] } })
      seen.push(`created ${stored.items.length}`)
    })
    .on('statusChanged', ({ order, from, to }: OrderMove) => {
      seen.push(`statusChanged ${from}->${to} v${order.version}`)
    })
  const created = await post(app, 'createOrder', orderBody())
  t.same(seen, ['created 1'])
  await post(app, 'updateOrderStatus', { id: created.body.id, status: 'paid' })
  await post(app, 'updateOrderStatus', { id: created.body.id, status: 'paid' })
  t.same(seen, ['created 1', 'statusChanged pending->paid v2'], 'a no-op fires nothing')
})

t.test('on() rejects unknown events and non-function listeners', async t => {
  const app = await buildApp(t)
  t.throws(() => app.orders.on('deleted' as 'created', () => {}), { code: 'ORDER_INVALID_LISTENER' })
  t.throws(() => app.orders.on('created', 'log' as never), { code: 'ORDER_INVALID_LISTENER' })
})

t.test('app.orders.create keeps its own copy of the input', async t => {
  const app = await buildApp(t)
  const input = orderBody()
  const order = await app.orders.create(input)
  input.items[0]!.quantity = 99
  input.metadata!.channel = 'changed'
  t.notOk(Object.isFrozen(input.items[0]), 'the caller\'s objects stay theirs')
  const stored = (await app.orders.list()).items[0]!
  t.equal(stored.items[0]!.quantity, order.items[0]!.quantity)
  t.equal(stored.items[0]!.quantity, 2)
  t.equal(stored.metadata.channel, 'web')
})
