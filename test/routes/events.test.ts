// The event feed: every stored change is an event, listed in feed order; nothing else is.
import t from 'tap'
import { memoryStorage, type OrderStorage } from '../../lib/index.js'
import { address, bodyWith, Gift, Shipping } from '../custom-field-schemas.js'
import { buildApp, createOrder, eventually, logLines, orderBody, post, waitForEvents } from '../helper.js'

t.test('every create and status change is an event carrying the order as stored', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  const paid = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid', reason: 'card' })
  const [created, statusChanged] = await waitForEvents(app, 2)
  t.match(created, { type: 'created', at: order.createdAt, order })
  t.same(created!.order, order, 'the created event holds the order as the response showed it')
  t.notOk('from' in created!, 'a created event has no from')
  t.match(statusChanged, { type: 'statusChanged', at: paid.body.updatedAt, from: 'pending' })
  t.same(statusChanged!.order, paid.body)
  t.not(created!.id, statusChanged!.id)
  t.match(created!.id, /^[\da-f]{8}-[\da-f]{4}-4[\da-f]{3}-[89ab][\da-f]{3}-[\da-f]{12}$/, 'event ids are UUIDs')
})

t.test('a no-op, an idempotent replay and a refused request make no event', async t => {
  const app = await buildApp(t)
  const key = { 'idempotency-key': 'events-replay' }
  const order = (await post(app, 'createOrder', orderBody(), key)).body
  t.equal((await post(app, 'createOrder', orderBody(), key)).headers['idempotent-replayed'], 'true')
  t.equal((await post(app, 'createOrder', orderBody({ currency: 'USD' }), key)).status, 422)
  t.equal((await post(app, 'createOrder', { ...orderBody(), total: 1 })).status, 400)
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'pending' })).status, 200, 'a no-op')
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'shipped' })).status, 409)
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'paid', expectedVersion: 3 })).status, 409)
  // A later change: once its event is listed, every event before it is too.
  const last = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  const events = await waitForEvents(app, 2)
  t.same(events.map(event => [event.type, event.order.version]), [['created', 1], ['statusChanged', 2]])
  t.same((await app.orders.listEvents({ after: events[1]!.id })).items, [], 'nothing after the last change')
  t.equal(last.body.version, 2)
})

t.test('listEvents pages in feed order with after and limit', async t => {
  const app = await buildApp(t)
  const orders = []
  for (let i = 0; i < 5; i++) orders.push(await createOrder(app, { customerId: `cus_${i}` }))
  const all = await waitForEvents(app, 5)
  t.same(all.map(event => event.order.id), orders.map(order => order.id), 'in the order they were stored')
  t.same((await app.orders.listEvents({ limit: 2 })).items, all.slice(0, 2), 'without after: from the oldest')
  t.same((await app.orders.listEvents({ after: all[1]!.id, limit: 2 })).items, all.slice(2, 4))
  t.same((await app.orders.listEvents({ after: all[3]!.id })).items, all.slice(4), 'limit defaults to 100')
})

t.test('an after that names no event throws ORDER_EVENT_NOT_FOUND', async t => {
  const app = await buildApp(t)
  await createOrder(app)
  await waitForEvents(app, 1)
  for (const after of ['9b2f8c1e-0d4a-4c3b-8e5f-1a2b3c4d5e6f', 'not-an-event-id', '9B2F8C1E-0D4A-4C3B-8E5F-1A2B3C4D5E6F']) {
    await t.rejects(app.orders.listEvents({ after }), { code: 'ORDER_EVENT_NOT_FOUND', statusCode: 404 }, after)
  }
})

t.test('listEvents checks its arguments like every app.orders input', async t => {
  const app = await buildApp(t)
  const invalid: unknown[] = [{ limit: 0 }, { limit: 1001 }, { limit: '10' }, { after: 5 }, { after: '' }, { cursor: 'x' }, null, 'all']
  for (const query of invalid) {
    await t.rejects(app.orders.listEvents(query as object), { code: 'FST_ERR_VALIDATION', statusCode: 400 }, JSON.stringify(query))
  }
  t.same((await app.orders.listEvents({ limit: 1000 })).items, [], 'limit goes up to 1000')
})

t.test('events handed to host code are frozen, so no host change reaches the store', async t => {
  const app = await buildApp(t)
  await createOrder(app)
  const [event] = await waitForEvents(app, 1)
  t.ok(Object.isFrozen(event))
  t.ok(Object.isFrozen(event!.order))
  t.ok(Object.isFrozen(event!.order.items[0]))
  t.throws(() => { (event!.order as { status: string }).status = 'paid' })
})

t.test('expired events are purged as new events are written', async t => {
  const storage = memoryStorage()
  const app = await buildApp(t, { storage, eventRetention: 50 })
  await createOrder(app)
  const [first] = await waitForEvents(app, 1)
  await new Promise(resolve => setTimeout(resolve, 60))
  // The first write after start purged (nothing was old enough then); a hundred writes on, a purge runs again.
  for (let i = 0; i < 100; i++) await createOrder(app)
  await eventually('the first event is purged', async () =>
    await app.orders.listEvents({ after: first!.id }).then(() => false, (err: { code: string }) => err.code === 'ORDER_EVENT_NOT_FOUND'))
  t.ok((await app.orders.listEvents({ limit: 1000 })).items.length < 101, 'the feed keeps what retention allows')
})

t.test('a purge that fails is logged, and the write that started it still succeeds', async t => {
  const { lines, stream } = logLines()
  const inner = memoryStorage()
  const storage: OrderStorage = { ...inner, purgeEvents: async () => { throw new Error('purge refused') } }
  const app = await buildApp(t, { storage }, { logger: { stream } })
  t.equal((await post(app, 'createOrder', orderBody())).status, 201)
  await eventually('the failed purge is logged', () => lines.some(line => line.err?.message === 'purge refused'))
  t.match(lines.find(line => line.err?.message === 'purge refused'), { level: 40, msg: /purging expired events failed/ })
})

t.test('a feed the storage cannot read throws ORDER_STORAGE_UNAVAILABLE with the cause', async t => {
  const inner = memoryStorage()
  const cause = new Error('connection reset')
  const app = await buildApp(t, { storage: { ...inner, listEvents: async () => { throw cause } } })
  await t.rejects(app.orders.listEvents(), { code: 'ORDER_STORAGE_UNAVAILABLE', statusCode: 503, cause })
})

t.test('events carry the order\'s and items\' custom fields as each change stored them', async t => {
  const app = await buildApp(t, { customFields: { order: Shipping, item: Gift } })
  const created = await post(app, 'createOrder', bodyWith({ address }, { giftNote: 'Happy birthday' }))
  t.equal(created.status, 201)
  const shipped = await post(app, 'updateOrderStatus', { id: created.body.id, status: 'paid', customFields: { trackingNumber: 'TRK-1' } })
  t.equal(shipped.status, 200)
  // Without OrderCustomFields declared, the types have no customFields: read the events as JSON.
  const [first, second] = (await waitForEvents(app, 2)) as Array<{ order: any }>
  t.same(first!.order, created.body, 'the created event has the custom fields of the create')
  t.same(first!.order.customFields, { address })
  t.same(first!.order.items[0].customFields, { giftNote: 'Happy birthday' })
  t.same(second!.order, shipped.body, 'the statusChanged event has them as the move patched them')
  t.same(second!.order.customFields, { address, trackingNumber: 'TRK-1' })
})
