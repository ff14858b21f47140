// Idempotent creates: a retried createOrder with the same Idempotency-Key never makes a second order.
import t, { type Test } from 'tap'
import { memoryStorage, type Order, type OrderStorage } from '../../lib/index.js'
import { buildApp, orderBody, post } from '../helper.js'

async function storedOrders (app: Awaited<ReturnType<typeof buildApp>>): Promise<Order[]> {
  const { status, body } = await post(app, 'getOrderList', { limit: 100 })
  if (status !== 200) throw new Error(`getOrderList answered ${status}`)
  return body.items
}

t.test('a retried create with the same key and body returns the first order and stores no second one', async t => {
  const app = await buildApp(t)
  const first = await post(app, 'createOrder', orderBody(), { 'idempotency-key': 'order-1' })
  t.equal(first.status, 201)
  t.notOk(first.headers['idempotent-replayed'], 'the first create is not a replay')

  const retry = await post(app, 'createOrder', orderBody(), { 'idempotency-key': 'order-1' })
  t.equal(retry.status, 201)
  t.equal(retry.headers['idempotent-replayed'], 'true')
  t.same(retry.body, first.body, 'the same order, same id')
  t.same((await storedOrders(app)).map(order => order.id), [first.body.id])
})

t.test('a retry whose metadata keys come in another order counts as the same body', async t => {
  const app = await buildApp(t)
  const first = await post(app, 'createOrder', orderBody({ metadata: { a: '1', b: '2' } }), { 'idempotency-key': 'k' })
  const retry = await post(app, 'createOrder', orderBody({ metadata: { b: '2', a: '1' } }), { 'idempotency-key': 'k' })
  t.equal(retry.status, 201)
  t.equal(retry.headers['idempotent-replayed'], 'true')
  t.equal(retry.body.id, first.body.id)
  t.equal((await storedOrders(app)).length, 1)
})

t.test('a retry that leaves out metadata matches a first create with empty metadata', async t => {
  const app = await buildApp(t)
  // JSON drops an undefined property: the request carries no metadata at all.
  const withoutMetadata = { ...orderBody(), metadata: undefined }
  const first = await post(app, 'createOrder', { ...withoutMetadata, metadata: {} }, { 'idempotency-key': 'k' })
  const retry = await post(app, 'createOrder', withoutMetadata, { 'idempotency-key': 'k' })
  t.equal(retry.status, 201)
  t.equal(retry.headers['idempotent-replayed'], 'true', 'both store the same order: metadata {}')
  t.equal(retry.body.id, first.body.id)
})

t.test('reusing a key with a different body is 422 ORDER_IDEMPOTENCY_KEY_REUSED and stores nothing new', async t => {
  const app = await buildApp(t)
  const first = await post(app, 'createOrder', orderBody(), { 'idempotency-key': 'k' })
  const changes: Array<Partial<ReturnType<typeof orderBody>>> = [
    { currency: 'USD' },
    { items: [{ sku: 'A-1', name: 'Mug', quantity: 3, unitPrice: 1250 }] },
    { items: [{ sku: 'A-1', quantity: 2, unitPrice: 1250 }] },
    { metadata: { channel: 'app' } },
    { customerId: 'cus_43' }
  ]
  for (const change of changes) {
    const reused = await post(app, 'createOrder', orderBody(change), { 'idempotency-key': 'k' })
    t.equal(reused.status, 422, JSON.stringify(change))
    t.equal(reused.body.code, 'ORDER_IDEMPOTENCY_KEY_REUSED')
    t.notOk(reused.headers['idempotent-replayed'])
  }
  t.same((await storedOrders(app)).map(order => order.id), [first.body.id])
})

t.test('an Idempotency-Key that is empty, too long or not visible ASCII is 400 and stores nothing', async t => {
  const app = await buildApp(t)
  const keys = {
    empty: '',
    '256 characters': 'k'.repeat(256),
    'a space': 'order 1',
    'a tab': 'order\t1',
    'non-ASCII': 'commande-é',
    'a control character': 'order\u00011',
    DEL: 'order\u007f'
  }
  for (const [name, key] of Object.entries(keys)) {
    const { status, body } = await post(app, 'createOrder', orderBody(), { 'idempotency-key': key })
    t.equal(status, 400, name)
    t.equal(body.code, 'ORDER_INVALID_IDEMPOTENCY_KEY', name)
  }
  t.same(await storedOrders(app), [])
})

t.test('an Idempotency-Key of 255 visible ASCII characters is accepted', async t => {
  const app = await buildApp(t)
  let visible = ''
  for (let code = 0x21; code <= 0x7e; code++) visible += String.fromCharCode(code)
  const key = visible.repeat(3).slice(0, 255)
  const first = await post(app, 'createOrder', orderBody(), { 'idempotency-key': key })
  t.equal(first.status, 201)
  const retry = await post(app, 'createOrder', orderBody(), { 'idempotency-key': key })
  t.equal(retry.headers['idempotent-replayed'], 'true')
  t.equal(retry.body.id, first.body.id)
})

t.test('concurrent creates with the same key make exactly one order and each gets it', async t => {
  const app = await buildApp(t)
  const created: Order[] = []
  app.orders.on('created', order => { created.push(order) })
  const responses = await Promise.all(Array.from({ length: 20 }, () =>
    post(app, 'createOrder', orderBody(), { 'idempotency-key': 'burst' })))
  const orders = await storedOrders(app)
  t.equal(orders.length, 1)
  t.equal(created.length, 1, 'one created event')
  for (const { status, body } of responses) {
    if (status === 409) t.equal(body.code, 'ORDER_IDEMPOTENCY_IN_PROGRESS')
    else {
      t.equal(status, 201)
      t.equal(body.id, orders[0]!.id)
    }
  }
  t.equal(responses.filter(response => response.headers['idempotent-replayed'] === undefined).length, 1,
    'exactly one response is the original create')
})

t.test('keys are scoped by the caller: two customers using one key get two orders', async t => {
  const app = await buildApp(t, {
    authorize: (request) => ({ customerId: request.headers['x-customer'] as string })
  })
  const alice = await post(app, 'createOrder', orderBody({ customerId: 'alice' }), { 'idempotency-key': 'k', 'x-customer': 'alice' })
  const bob = await post(app, 'createOrder', orderBody({ customerId: 'bob' }), { 'idempotency-key': 'k', 'x-customer': 'bob' })
  t.equal(alice.status, 201)
  t.equal(bob.status, 201)
  t.notOk(bob.headers['idempotent-replayed'])
  t.not(bob.body.id, alice.body.id)
  t.equal(bob.body.customerId, 'bob')

  const aliceRetry = await post(app, 'createOrder', orderBody({ customerId: 'alice' }), { 'idempotency-key': 'k', 'x-customer': 'alice' })
  t.equal(aliceRetry.body.id, alice.body.id, 'each customer still replays their own order')
  t.equal((await app.orders.list()).items.length, 2)
})

/** Moves the clock that `new Date()` and `Date.now()` read forward by `ms` until the test ends. */
function travel (t: Test, ms: number): void {
  const RealDate = Date
  class ShiftedDate extends RealDate {
    constructor (...args: []) {
      if (args.length === 0) super(RealDate.now() + ms)
      else super(...(args as unknown as [number]))
    }

    static override now (): number {
      return RealDate.now() + ms
    }
  }
  globalThis.Date = ShiftedDate as DateConstructor
  t.teardown(() => { globalThis.Date = RealDate })
}

const HOUR = 60 * 60 * 1000

t.test('a key is kept for the default 24 hours and then creates a new order', async t => {
  const app = await buildApp(t)
  const first = await post(app, 'createOrder', orderBody(), { 'idempotency-key': 'k' })

  await t.test('a day less a minute later', async t => {
    travel(t, 24 * HOUR - 60_000)
    const retry = await post(app, 'createOrder', orderBody(), { 'idempotency-key': 'k' })
    t.equal(retry.body.id, first.body.id, 'the key still replays')
    t.equal(retry.headers['idempotent-replayed'], 'true')
  })

  await t.test('a day and a second later', async t => {
    travel(t, 24 * HOUR + 1000)
    const later = await post(app, 'createOrder', orderBody({ currency: 'USD' }), { 'idempotency-key': 'k' })
    t.equal(later.status, 201, 'an expired key is free again, even for another body')
    t.notOk(later.headers['idempotent-replayed'])
    t.not(later.body.id, first.body.id)
    const replayOfNew = await post(app, 'createOrder', orderBody({ currency: 'USD' }), { 'idempotency-key': 'k' })
    t.equal(replayOfNew.body.id, later.body.id, 'the key now belongs to the new order')
    t.equal((await storedOrders(app)).length, 2)
  })
})

t.test('idempotencyTtl sets how long keys are kept', async t => {
  const app = await buildApp(t, { idempotencyTtl: HOUR })
  const first = await app.orders.create(orderBody(), { idempotencyKey: 'k' })
  t.equal((await app.orders.create(orderBody(), { idempotencyKey: 'k' })).id, first.id, 'kept within the hour')
  travel(t, HOUR + 1000)
  const later = await app.orders.create(orderBody(), { idempotencyKey: 'k' })
  t.not(later.id, first.id, 'an hour later the key made a new order')
})

t.test('memory storage forgets expired keys, however many were made', async t => {
  const storage = memoryStorage()
  const app = await buildApp(t, { storage })
  // More keys than the purge's compaction threshold, so the compaction runs too.
  for (let i = 0; i < 1100; i++) {
    await app.orders.create(orderBody(), { idempotencyKey: `k${i}` })
  }
  travel(t, 25 * HOUR)
  const again = await app.orders.create(orderBody({ currency: 'USD' }), { idempotencyKey: 'k0' })
  t.equal(again.currency, 'USD', 'an expired key creates a new order')
  const last = await app.orders.create(orderBody({ currency: 'GBP' }), { idempotencyKey: 'k1099' })
  t.equal(last.currency, 'GBP')
  const replay = await app.orders.create(orderBody({ currency: 'GBP' }), { idempotencyKey: 'k1099' })
  t.equal(replay.id, last.id, 'keys made after the purge are kept')
})

t.test('a storage that reports the key as in progress gives 409 ORDER_IDEMPOTENCY_IN_PROGRESS', async t => {
  const inner = memoryStorage()
  const storage: OrderStorage = {
    ...inner,
    create: async (order, event, claim) => claim === undefined ? inner.create(order, event) : { created: false, inProgress: true }
  }
  const app = await buildApp(t, { storage })
  const { status, body } = await post(app, 'createOrder', orderBody(), { 'idempotency-key': 'k' })
  t.equal(status, 409)
  t.equal(body.code, 'ORDER_IDEMPOTENCY_IN_PROGRESS')
  t.same((await app.orders.list()).items, [])
  await t.rejects(app.orders.create(orderBody(), { idempotencyKey: 'k' }), { code: 'ORDER_IDEMPOTENCY_IN_PROGRESS' })
})

t.test('app.orders.create with an idempotencyKey replays like the route', async t => {
  const app = await buildApp(t)
  const first = await app.orders.create(orderBody(), { idempotencyKey: 'job-7' })
  const retry = await app.orders.create(orderBody(), { idempotencyKey: 'job-7' })
  t.equal(retry.id, first.id)
  const overHttp = await post(app, 'createOrder', orderBody(), { 'idempotency-key': 'job-7' })
  t.equal(overHttp.body.id, first.id, 'app.orders and the route share keys')
  await t.rejects(app.orders.create(orderBody({ currency: 'USD' }), { idempotencyKey: 'job-7' }),
    { code: 'ORDER_IDEMPOTENCY_KEY_REUSED', statusCode: 422 })
  await t.rejects(app.orders.create(orderBody(), { idempotencyKey: 'job 7' }),
    { code: 'ORDER_INVALID_IDEMPOTENCY_KEY', statusCode: 400 })
  t.equal((await app.orders.list()).items.length, 1)
})

t.test('a replay does not emit a second created event', async t => {
  const app = await buildApp(t)
  let created = 0
  app.orders.on('created', () => { created++ })
  await post(app, 'createOrder', orderBody(), { 'idempotency-key': 'k' })
  await post(app, 'createOrder', orderBody(), { 'idempotency-key': 'k' })
  t.equal(created, 1)
})
