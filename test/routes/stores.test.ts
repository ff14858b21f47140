// Stores and who did what: orders confined to a store by the scope, every change signed by its actor.
import { createHash } from 'node:crypto'
import t from 'tap'
import { fingerprintOf } from '../../lib/orders/idempotency.js'
import type { Authorize, Order, OrderEvent } from '../../lib/index.js'
import { buildApp, createOrder, orderBody, post, waitForEvents } from '../helper.js'

/** The scope a test client claims through headers; a real host reads a verified session or token. */
const headerScope: Authorize = (request) => {
  const scope: Record<string, string> = {}
  for (const key of ['customerId', 'store', 'actor']) {
    const value = request.headers[`x-${key.toLowerCase()}`]
    if (typeof value === 'string') scope[key] = value
  }
  // No header at all: an admin, allowed everything (an empty scope would fail closed).
  return Object.keys(scope).length === 0 ? true : scope
}
const staffOf = (store: string, actor = `staff_${store}`) => ({ 'x-store': store, 'x-actor': actor })

async function listIds (app: Awaited<ReturnType<typeof buildApp>>, body: object, headers: Record<string, string> = {}): Promise<string[]> {
  const { status, body: page } = await post(app, 'getOrderList', body, headers)
  if (status !== 200) throw new Error(`getOrderList answered ${status}: ${JSON.stringify(page)}`)
  return page.items.map((order: Order) => order.id)
}

t.test('an order keeps the store it was created in, and shows none when it has none', async t => {
  const app = await buildApp(t)
  const eu = await createOrder(app, { store: 'eu-1.b_2' })
  t.equal(eu.store, 'eu-1.b_2')
  const plain = await createOrder(app)
  t.notOk('store' in plain, 'no store key on an order without one')
  const paid = await post(app, 'updateOrderStatus', { id: eu.id, status: 'paid' })
  t.equal(paid.body.store, 'eu-1.b_2', 'a move keeps the store')
  t.same((await app.orders.list({ filter: { ids: [eu.id, plain.id] } })).items.map(order => order.store).sort(), ['eu-1.b_2', undefined])
  t.notOk(JSON.stringify((await post(app, 'getOrderList', { filter: { ids: [plain.id] } })).body).includes('"store"'))
})

t.test('a store key that is not 1 to 64 characters of letters, digits, "_", "." and "-" is a 400, in a body and in a filter', async t => {
  const app = await buildApp(t)
  for (const store of ['', 'e u', 'eu/1', 'x'.repeat(65), 'ü', 'eu\n', 7, null]) {
    const created = await post(app, 'createOrder', orderBody({ store: store as string }))
    t.equal(created.status, 400, `create with ${JSON.stringify(store)}`)
    t.equal(created.body.code, 'FST_ERR_VALIDATION')
    const listed = await post(app, 'getOrderList', { filter: { store } })
    t.equal(listed.status, 400, `filter with ${JSON.stringify(store)}`)
  }
  t.equal((await post(app, 'createOrder', orderBody({ store: 'x'.repeat(64) }))).status, 201)
  t.same((await app.orders.list()).items.length, 1, 'only the valid one was created')
  await t.rejects(app.orders.create(orderBody({ store: 'e u' })), { code: 'FST_ERR_VALIDATION' })
})

t.test('filter.store lists one store\'s orders, alone and with the other filters', async t => {
  const app = await buildApp(t)
  const eu1 = await createOrder(app, { store: 'eu', customerId: 'cus_1', reference: 'r1' })
  const us1 = await createOrder(app, { store: 'us', customerId: 'cus_1', reference: 'r1' })
  const eu2 = await createOrder(app, { store: 'eu', customerId: 'cus_2' })
  const none = await createOrder(app, { customerId: 'cus_1', reference: 'r1' })
  await post(app, 'updateOrderStatus', { id: eu2.id, status: 'paid' })
  t.same(await listIds(app, { filter: { store: 'eu' } }), [eu2.id, eu1.id])
  t.same(await listIds(app, { filter: { store: 'us' }, order: 'asc' }), [us1.id])
  t.same(await listIds(app, { filter: { store: 'nowhere' } }), [])
  t.same(await listIds(app, { filter: { store: 'eu', status: 'paid' } }), [eu2.id])
  t.same(await listIds(app, { filter: { store: 'eu', customerId: 'cus_1' } }), [eu1.id])
  t.same(await listIds(app, { filter: { store: 'eu', ids: [eu1.id, us1.id, none.id] } }), [eu1.id])
  t.same(await listIds(app, { filter: { store: 'us', number: us1.number } }), [us1.id])
  t.same(await listIds(app, { filter: { store: 'eu', number: us1.number } }), [])
  t.same(await listIds(app, { filter: { reference: 'r1', customerId: 'cus_1' } }), [none.id, us1.id, eu1.id], 'one per store')
  t.same(await listIds(app, { filter: { store: 'us', reference: 'r1' } }), [us1.id])
  t.same(await listIds(app, { filter: { store: 'eu', createdFrom: eu1.createdAt, createdTo: '9999-01-01T00:00:00.000Z' } }), [eu2.id, eu1.id])
  // A cursor is bound to its filter, store included.
  const first = await post(app, 'getOrderList', { limit: 1, filter: { store: 'eu' } })
  t.same(first.body.items.map((order: Order) => order.id), [eu2.id])
  t.same(await listIds(app, { limit: 1, filter: { store: 'eu' }, cursor: first.body.nextCursor }), [eu1.id])
  const other = await post(app, 'getOrderList', { limit: 1, filter: { store: 'us' }, cursor: first.body.nextCursor })
  t.equal(other.body.code, 'ORDER_INVALID_CURSOR')
})

t.test('staff scoped to a store see and move that store\'s orders only, whatever the filter names', async t => {
  const app = await buildApp(t, { authorize: headerScope })
  const eu = await createOrder(app, { store: 'eu', customerId: 'cus_1', reference: 'cart_1' })
  const us = await createOrder(app, { store: 'us', customerId: 'cus_1', reference: 'cart_1' })
  const none = await createOrder(app, { customerId: 'cus_1', reference: 'cart_1' })
  const staff = staffOf('eu')
  t.same(await listIds(app, {}, staff), [eu.id])
  t.same(await listIds(app, { filter: { store: 'us' } }, staff), [], 'another store by name: an empty page')
  t.same(await listIds(app, { filter: { ids: [eu.id, us.id, none.id] } }, staff), [eu.id])
  t.same(await listIds(app, { filter: { number: us.number } }, staff), [])
  t.same(await listIds(app, { filter: { number: none.number } }, staff), [])
  t.same(await listIds(app, { filter: { reference: 'cart_1' } }, staff), [eu.id])
  t.same(await listIds(app, { filter: { reference: 'cart_1', customerId: 'cus_1' } }, staff), [eu.id])
  t.same(await listIds(app, { filter: { customerId: 'cus_1', status: 'pending' } }, staff), [eu.id])
  for (const order of [us, none]) {
    const moved = await post(app, 'updateOrderStatus', { id: order.id, status: 'cancelled' }, staff)
    t.equal(moved.status, 404, 'another store\'s order, or one of none, is not found')
    const unknown = await post(app, 'updateOrderStatus', { id: 'ord_unknown', status: 'cancelled' }, staff)
    t.same({ ...moved.body, message: moved.body.message.replace(order.id, 'ord_unknown') }, unknown.body, 'answered like an unknown id')
  }
  t.equal((await post(app, 'updateOrderStatus', { id: eu.id, status: 'paid' }, staff)).status, 200)
  t.same((await app.orders.list({ order: 'asc' })).items.map(order => order.status), ['paid', 'pending', 'pending'], 'only the store\'s order moved')
})

t.test('createOrder under a store scope puts the order in that store and refuses another', async t => {
  const app = await buildApp(t, { authorize: headerScope })
  const staff = staffOf('eu')
  const scoped = await post(app, 'createOrder', orderBody(), staff)
  t.equal(scoped.status, 201)
  t.equal(scoped.body.store, 'eu', 'a body without a store gets the scope\'s')
  const same = await post(app, 'createOrder', orderBody({ store: 'eu' }), staff)
  t.equal(same.status, 201)
  const other = await post(app, 'createOrder', orderBody({ store: 'us' }), staff)
  t.equal(other.status, 403)
  t.equal(other.body.code, 'ORDER_FORBIDDEN')
  t.equal((await app.orders.list()).items.length, 2, 'nothing created by the refused one')
  await t.rejects(app.orders.create(orderBody({ store: 'us' }), { scope: { store: 'eu' } }), { code: 'ORDER_FORBIDDEN' })
})

t.test('a customer and a store in one scope both apply', async t => {
  const app = await buildApp(t, { authorize: headerScope })
  const mine = await createOrder(app, { store: 'eu', customerId: 'cus_1' })
  const elsewhere = await createOrder(app, { store: 'us', customerId: 'cus_1' })
  const others = await createOrder(app, { store: 'eu', customerId: 'cus_2' })
  const scope = { 'x-customerid': 'cus_1', 'x-store': 'eu' }
  t.same(await listIds(app, {}, scope), [mine.id])
  t.same(await listIds(app, { filter: { ids: [mine.id, elsewhere.id, others.id] } }, scope), [mine.id])
  t.equal((await post(app, 'createOrder', orderBody({ customerId: 'cus_2' }), scope)).status, 403)
  t.equal((await post(app, 'createOrder', orderBody({ customerId: 'cus_1', store: 'us' }), scope)).status, 403)
  const created = await post(app, 'createOrder', orderBody({ customerId: 'cus_1' }), scope)
  t.match(created.body, { customerId: 'cus_1', store: 'eu' })
  for (const order of [elsewhere, others]) t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' }, scope)).status, 404)
  t.equal((await post(app, 'updateOrderStatus', { id: mine.id, status: 'paid' }, scope)).status, 200)
})

t.test('every history entry made under an actor carries it as `by`, the first one included; others carry none', async t => {
  const app = await buildApp(t, { authorize: headerScope })
  const created = await post(app, 'createOrder', orderBody(), { 'x-actor': 'staff_7' })
  t.same(created.body.statusHistory.map(({ status, by }: { status: string, by?: string }) => [status, by]), [['pending', 'staff_7']])
  const paid = await post(app, 'updateOrderStatus', { id: created.body.id, status: 'paid', reason: 'card captured' }, { 'x-actor': 'job:capture' })
  const shipped = await post(app, 'updateOrderStatus', { id: created.body.id, status: 'shipped' })
  t.same(shipped.body.statusHistory.map(({ at: _, ...change }: { at: string }) => change), [
    { status: 'pending', by: 'staff_7' },
    { status: 'paid', reason: 'card captured', by: 'job:capture' },
    { status: 'shipped' }
  ])
  t.equal(paid.body.version, 2)
  const again = await post(app, 'updateOrderStatus', { id: created.body.id, status: 'shipped' }, { 'x-actor': 'someone' })
  t.same(again.body.statusHistory, shipped.body.statusHistory, 'a no-op adds no entry')
  const plain = await createOrder(app)
  t.notOk('by' in plain.statusHistory[0]!)
  const byService = await app.orders.updateStatus({ id: plain.id, status: 'cancelled' }, { scope: { actor: 'job:nightly-cancel' } })
  t.equal(byService.statusHistory.at(-1)!.by, 'job:nightly-cancel', 'app.orders signs the same way')
  const events = await waitForEvents(app, 5)
  t.same(events.map((event: OrderEvent) => event.order.statusHistory.at(-1)!.by), ['staff_7', 'job:capture', undefined, undefined, 'job:nightly-cancel'],
    'events carry who made each change')
})

t.test('a bad store or actor in a scope fails closed: 500 ORDER_INVALID_SCOPE naming the rule, never the value', async t => {
  const bad: Array<[string, object]> = [
    ['store with a space', { store: 'e u' }], ['empty store', { store: '' }], ['numeric store', { store: 42 }], ['null store', { store: null }],
    ['store too long', { store: 'x'.repeat(65) }], ['empty actor', { actor: '' }], ['actor with a newline', { actor: 'staff\n7' }],
    ['actor with DEL', { actor: 'staff\u007f' }], ['actor too long', { actor: 'x'.repeat(129) }], ['actor object', { actor: { id: 7 } }]
  ]
  let given: object = {}
  const app = await buildApp(t, { authorize: () => given as never })
  const order = await app.orders.create(orderBody({ store: 'eu' }))
  for (const [what, scope] of bad) {
    given = scope
    for (const [operation, body] of [['getOrderList', {}], ['createOrder', orderBody()], ['updateOrderStatus', { id: order.id, status: 'paid' }]] as const) {
      const answer = await post(app, operation, body)
      t.equal(answer.status, 500, `${what}: ${operation}`)
      t.equal(answer.body.code, 'ORDER_INVALID_SCOPE')
      t.match(answer.body.message, 'store' in scope ? /store must be a string of 1 to 64 characters/ : /actor must be a string of 1 to 128 characters without control characters/)
      for (const value of Object.values(scope)) if (typeof value === 'string' && value.length > 1) t.notOk(answer.body.message.includes(value), 'no value echoed')
    }
    await t.rejects(app.orders.updateStatus({ id: order.id, status: 'paid' }, { scope: scope as never }), { code: 'ORDER_INVALID_SCOPE' })
    t.same((await app.orders.list()).items, [order], `${what}: nothing created, nothing moved`)
  }
  given = { store: 'x'.repeat(64), actor: '😀'.repeat(128) }
  t.equal((await post(app, 'createOrder', orderBody())).status, 201, 'the longest store and actor are fine')
})

t.test('a reference is unique per customer within a store: a 409 never reveals another store\'s order', async t => {
  const app = await buildApp(t, { authorize: headerScope })
  const eu = await post(app, 'createOrder', orderBody({ reference: 'cart_1' }), staffOf('eu'))
  const us = await post(app, 'createOrder', orderBody({ reference: 'cart_1' }), staffOf('us'))
  t.equal(eu.status, 201)
  t.equal(us.status, 201, 'the same customer may use the reference in another store')
  const taken = await post(app, 'createOrder', orderBody({ reference: 'cart_1' }), staffOf('eu'))
  t.equal(taken.status, 409)
  t.equal(taken.body.code, 'ORDER_REFERENCE_TAKEN')
  t.equal((await post(app, 'createOrder', orderBody({ reference: 'cart_1' }))).status, 201, 'orders without a store are one more store')
  t.equal((await post(app, 'createOrder', orderBody({ reference: 'cart_1' }))).status, 409)
  t.same(await listIds(app, { filter: { reference: 'cart_1' } }, staffOf('us')), [us.body.id])
})

t.test('idempotency keys are scoped by store, not by actor; a store from the scope is not in the fingerprint', async t => {
  const app = await buildApp(t, { authorize: headerScope })
  const key = { 'idempotency-key': 'checkout-1' }
  const eu = await post(app, 'createOrder', orderBody(), { ...key, ...staffOf('eu', 'ada') })
  const euAgain = await post(app, 'createOrder', orderBody(), { ...key, ...staffOf('eu', 'bob') })
  t.equal(euAgain.headers['idempotent-replayed'], 'true', 'another actor of the store replays the first order')
  t.equal(euAgain.body.id, eu.body.id)
  t.same(euAgain.body.statusHistory, eu.body.statusHistory, 'signed by whoever created it')
  const us = await post(app, 'createOrder', orderBody(), { ...key, ...staffOf('us') })
  t.equal(us.status, 201)
  t.not(us.body.id, eu.body.id, 'the same key in another store is another order')
  const unscoped = await post(app, 'createOrder', orderBody(), key)
  t.not(unscoped.body.id, eu.body.id, 'and so is the key without a store')
  t.equal(unscoped.headers['idempotent-replayed'], undefined)
  // The store in the body is part of what the key is bound to.
  const named = await post(app, 'createOrder', orderBody({ store: 'eu' }), { ...key, ...staffOf('eu') })
  t.equal(named.status, 422)
  t.equal(named.body.code, 'ORDER_IDEMPOTENCY_KEY_REUSED')
  t.equal((await app.orders.list()).items.length, 3)
})

t.test('a body without a store keeps the fingerprint it had before stores existed; with one, it changes', async t => {
  const body = orderBody({ reference: 'eu', metadata: { b: '2', a: '1' } })
  const before = createHash('sha256')
    .update(JSON.stringify([body.customerId, body.currency, [['A-1', 'Mug', 2, 1250]], [['a', '1'], ['b', '2']], 'eu']))
    .digest('base64url')
  t.equal(fingerprintOf(body), before)
  const { reference: _, ...withoutReference } = body
  t.not(fingerprintOf({ ...body, store: 'eu' }), before)
  t.not(fingerprintOf({ ...withoutReference, store: 'eu' }), before, 'a store is never taken for a reference of the same spelling')
})
