// The plugin's side of reads from replicas (section 19), on a storage whose replica reads are a fake: tokens handed out and taken back, floors per caller, cursors' views.
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { orderPlugin } from '../../lib/index.js'
import { encodeCursor } from '../../lib/orders/cursor.js'
import { fakeReplicaStorage } from '../fake-replicas.js'
import { buildApp, orderBody, post } from '../helper.js'

async function appOf (t: Test) {
  const fake = fakeReplicaStorage()
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, {
    storage: fake.storage,
    changes: { route: true, customerActions: ['recordPayment'] },
    authorize: request => {
      const customerId = request.headers['customer-id']
      return typeof customerId === 'string' ? { customerId } : true
    }
  })
  await app.ready()
  return { app, fake }
}

t.test('every 2xx of a write carries order-consistency; that caller\'s pages need it, other callers\' do not, until every replica has it', async t => {
  const { app, fake } = await appOf(t)
  const created = await post(app, 'createOrder', orderBody({ customerId: 'cus_a' }), { 'customer-id': 'cus_a', 'idempotency-key': 'k' })
  t.equal(created.headers['order-consistency'], 't1')
  t.equal((await post(app, 'createOrder', orderBody({ customerId: 'cus_a' }), { 'customer-id': 'cus_a', 'idempotency-key': 'k' })).headers['order-consistency'], 't2', 'a replay')
  t.equal((await post(app, 'updateOrderStatus', { id: created.body.id, status: 'pending' }, { 'customer-id': 'cus_a' })).headers['order-consistency'], 't3', 'a no-op')
  const change = { id: created.body.id, actions: [{ type: 'recordPayment', amount: 100, reference: 'p1' }] }
  t.equal((await post(app, 'changeOrder', change, { 'customer-id': 'cus_a', 'idempotency-key': 'c' })).headers['order-consistency'], 't4', 'a change')
  const again = await post(app, 'changeOrder', change, { 'customer-id': 'cus_a', 'idempotency-key': 'c' })
  t.same([again.headers['idempotent-replayed'], again.headers['order-consistency']], ['true', 't5'], 'a change replayed')
  const refused = await post(app, 'updateOrderStatus', { id: created.body.id, status: 'nonsense' }, { 'customer-id': 'cus_a' })
  t.equal(refused.status, 400)
  t.equal(refused.headers['order-consistency'], undefined)

  await post(app, 'getOrderList', {}, { 'customer-id': 'cus_a' })
  await post(app, 'getOrderList', {}, { 'customer-id': 'cus_b' })
  await post(app, 'getOrderList', {}, { 'customer-id': 'cus_b', 'order-consistency': 't5' })
  t.same(fake.views.splice(0), [
    { atLeast: ['t5'], primary: false },
    { atLeast: [], primary: false },
    { atLeast: ['t5'], primary: false }
  ], 'the writer\'s pages need its last write; another caller\'s only what it sends')
  fake.settled.add('t5')
  await post(app, 'getOrderList', {}, { 'customer-id': 'cus_a' })
  await post(app, 'getOrderList', {}, { 'customer-id': 'cus_a' })
  t.same(fake.views.splice(0), [{ atLeast: [], primary: false }, { atLeast: [], primary: false }], 'forgotten once every replica has it')

  const bad = await post(app, 'getOrderList', {}, { 'order-consistency': 'x' })
  t.same([bad.status, bad.body.code], [400, 'ORDER_INVALID_CONSISTENCY'])
})

t.test('app.orders: onConsistency, consistency, primary; replicas() for health checks; closing stops the storage\'s sampling', async t => {
  const { app, fake } = await appOf(t)
  const tokens: string[] = []
  const onConsistency = (token: string) => { tokens.push(token) }
  const order = await app.orders.create(orderBody(), { onConsistency })
  await app.orders.updateStatus({ id: order.id, status: 'paid' }, { onConsistency })
  await app.orders.change({ id: order.id, actions: [{ type: 'recordPayment', amount: 1, reference: 'r' }] }, { onConsistency })
  t.same(tokens, ['t1', 't2', 't3'])
  await app.orders.list({}, { consistency: 't1', primary: true, scope: { customerId: 'cus_z' } })
  // A store's staff are one caller, another store's another.
  await app.orders.create(orderBody({ store: 's1' }), { scope: { store: 's1' } })
  await app.orders.list({}, { scope: { store: 's1' } })
  await app.orders.list({}, { scope: { store: 's2' } })
  t.same(fake.views.splice(0), [{ atLeast: ['t1'], primary: true }, { atLeast: ['t4'], primary: false }, { atLeast: [], primary: false }])
  await t.rejects(app.orders.list({}, { consistency: 7 as never }), { code: 'ORDER_INVALID_CONSISTENCY' })
  await t.rejects(app.orders.create(orderBody(), { onConsistency: 'no' as never }), { code: 'ORDER_INVALID_OPTIONS', message: /onConsistency/ })
  t.same(app.orders.replicas(), [{ name: 'standby:5432', lagMs: 1500, inUse: true }, { name: 'standby-2:5432', lagMs: 0, inUse: false, error: 'not in recovery' }])
  await app.close()
  t.equal(fake.closed, 1)
})

t.test('a write nobody asked the token of answers before its position is read; its caller reads from the primary until it is known, for good if it cannot be read, until a later write\'s is', async t => {
  const { app, fake } = await appOf(t)
  const scope = { customerId: 'cus_a' }
  let release!: () => void
  fake.hold = new Promise<void>(resolve => { release = resolve })
  const [order] = await Promise.all([1, 2].map(() => app.orders.create(orderBody({ customerId: 'cus_a' }), { scope })))
  t.equal(order!.version, 1, 'answered while the positions are still being read')
  await app.orders.list({}, { scope })
  await app.orders.list({}, { scope: { customerId: 'cus_b' } })
  t.same(fake.views.splice(0), [{ atLeast: [], primary: true }, { atLeast: [], primary: false }], 'its caller\'s page from the primary, another caller\'s anywhere')
  release()
  await fake.hold
  await new Promise(resolve => setImmediate(resolve))
  await app.orders.list({}, { scope })
  t.same(fake.views.splice(0), [{ atLeast: ['t2'], primary: false }], 'then a replica that has both writes')

  fake.fail = new Error('the primary went away')
  await app.orders.updateStatus({ id: order!.id, status: 'paid' }, { scope })
  await new Promise(resolve => setImmediate(resolve))
  await app.orders.list({}, { scope })
  await t.rejects(app.orders.updateStatus({ id: order!.id, status: 'shipped' }, { scope, onConsistency: () => {} }), { code: 'ORDER_STORAGE_UNAVAILABLE', cause: { message: 'the primary went away' } }, 'a caller waiting for the token hears why there is none')
  t.same(fake.views.splice(0), [{ atLeast: [], primary: true }], 'a write of unknown position: the primary')
  fake.fail = undefined
  await app.orders.updateStatus({ id: order!.id, status: 'delivered' }, { scope, onConsistency: () => {} })
  await app.orders.list({}, { scope })
  t.same(fake.views.splice(0), [{ atLeast: ['t3'], primary: false }], 'until a later write\'s position is known')
})

t.test('a cursor names its view, and the next page needs it; a view not in the storage\'s form is ORDER_INVALID_CURSOR', async t => {
  const { app, fake } = await appOf(t)
  for (let i = 0; i < 3; i++) await app.orders.create(orderBody({ customerId: `cus_${i}` }))
  fake.settled.add('t3')
  const first = await app.orders.list({ limit: 2 }, { scope: { customerId: 'cus_other' } })
  t.same(first.nextCursor, null)
  const page = await app.orders.list({ limit: 2 })
  t.match(page.nextCursor, /^2\.t3\./)
  fake.views.length = 0
  await app.orders.list({ limit: 2, cursor: page.nextCursor! })
  t.same(fake.views, [{ atLeast: ['t3'], primary: false }])
  const foreign = encodeCursor(page.items[1]!, 'desc', {}, 'other-view')
  await t.rejects(app.orders.list({ limit: 2, cursor: foreign }), { code: 'ORDER_INVALID_CURSOR' })
})

t.test('without replicas no header, and a cursor with a view is only a position', async t => {
  const app = await buildApp(t)
  const created = await post(app, 'createOrder', orderBody())
  t.equal(created.headers['order-consistency'], undefined)
  const cursor = encodeCursor({ createdAt: created.body.createdAt, id: created.body.id }, 'asc', {}, 't9')
  t.same((await app.orders.list({ order: 'asc', cursor }, { consistency: 'ignored' })).items, [])
  t.same(app.orders.replicas(), [])
})

t.test('a thousand callers that wrote: their floors are swept once every replica has them', async t => {
  const { app, fake } = await appOf(t)
  for (let i = 0; i < 1024; i++) {
    if (i === 1000) for (let n = 1; n <= 1000; n++) fake.settled.add(`t${n}`)
    await app.orders.create(orderBody({ customerId: `cus_${i}` }), { scope: { customerId: `cus_${i}` } })
  }
  // The sweep forgot the settled floors: those callers' pages need nothing, the last ones' their write.
  fake.settled.clear()
  await app.orders.list({}, { scope: { customerId: 'cus_0' } })
  await app.orders.list({}, { scope: { customerId: 'cus_1023' } })
  t.same(fake.views, [{ atLeast: [], primary: false }, { atLeast: ['t1024'], primary: false }])
})
