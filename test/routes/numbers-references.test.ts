// Order numbers and the client's references: chosen, unique, found by filter, scoped, carried by events, kept by replays.
import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import t from 'tap'
import { fingerprintOf } from '../../lib/orders/idempotency.js'
import type { Order } from '../../lib/index.js'
import { buildApp, createOrder, logLines, orderBody, post, waitForEvents } from '../helper.js'

const list = async (app: Awaited<ReturnType<typeof buildApp>>, filter: object, headers: Record<string, string> = {}) => {
  const { status, body } = await post(app, 'getOrderList', { filter, order: 'asc' }, headers)
  if (status !== 200) throw new Error(`getOrderList answered ${status}: ${JSON.stringify(body)}`)
  return (body.items as Order[]).map(order => order.id)
}

t.test('every order gets a number, growing with creation; a reference only when given', async t => {
  const app = await buildApp(t)
  const created: number[] = []
  app.orders.on('created', order => { created.push(order.number) })
  const orders = [await createOrder(app), await createOrder(app, { reference: 'cart_8f2' }), await createOrder(app, { customerId: 'cus_7' })]
  const numbers = orders.map(order => order.number)
  t.ok(numbers.every(number => Number.isSafeInteger(number) && number > 0), 'positive integers')
  t.same([...numbers].sort((a, b) => a - b), numbers, 'a later create gets a larger number')
  t.equal(new Set(numbers).size, 3)
  t.equal(orders[1]!.reference, 'cart_8f2')
  t.notOk('reference' in orders[0]!, 'no reference key when none was given')
  t.same(created, numbers, 'listeners get the numbered order')
  const events = await waitForEvents(app, 3)
  t.same(events.map(event => [event.order.number, event.order.reference]), [[numbers[0], undefined], [numbers[1], 'cart_8f2'], [numbers[2], undefined]])
  const { body: paid } = await post(app, 'updateOrderStatus', { id: orders[1]!.id, status: 'paid' })
  t.same([paid.number, paid.reference], [numbers[1], 'cart_8f2'], 'a move keeps number and reference')
})

t.test('a reference is unique per customer: a second order with it is 409 ORDER_REFERENCE_TAKEN and nothing is made', async t => {
  const { lines, stream } = logLines()
  const app = await buildApp(t, {}, { logger: { stream } })
  const first = await createOrder(app, { reference: 'pi_3MtwBw' })
  const taken = await post(app, 'createOrder', orderBody({ reference: 'pi_3MtwBw', items: [{ sku: 'B-2', quantity: 1, unitPrice: 5 }] }), { 'idempotency-key': 'k-2' })
  t.equal(taken.status, 409)
  t.equal(taken.body.code, 'ORDER_REFERENCE_TAKEN')
  t.ok(lines.some(line => line.err?.code === 'ORDER_REFERENCE_TAKEN'), 'the 409 is logged')
  t.notOk(JSON.stringify(lines).includes('pi_3MtwBw'), 'no log line carries the client\'s reference')
  t.same(await list(app, {}), [first.id], 'no second order')
  t.equal((await waitForEvents(app, 1)).length, 1)
  // The key of the refused create was not claimed: with another body it creates.
  const retried = await post(app, 'createOrder', orderBody({ reference: 'pi_other' }), { 'idempotency-key': 'k-2' })
  t.equal(retried.status, 201)
  t.notOk(retried.headers['idempotent-replayed'])
  const other = await createOrder(app, { customerId: 'cus_other', reference: 'pi_3MtwBw' })
  t.equal(other.reference, 'pi_3MtwBw', 'another customer may use the same reference')
})

t.test('concurrent creates with one reference make one order', async t => {
  const app = await buildApp(t)
  const answers = await Promise.all(Array.from({ length: 8 }, () => post(app, 'createOrder', orderBody({ reference: 'cart_race' }))))
  t.same(answers.map(answer => answer.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409])
  t.equal((await list(app, { reference: 'cart_race' })).length, 1)
})

t.test('an idempotent replay answers with the first order, its number and reference; another reference under the key is 422', async t => {
  const app = await buildApp(t)
  const body = orderBody({ reference: 'cart_1' })
  const first = await post(app, 'createOrder', body, { 'idempotency-key': 'checkout-1' })
  const replay = await post(app, 'createOrder', body, { 'idempotency-key': 'checkout-1' })
  t.equal(replay.status, 201)
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.same(replay.body, first.body)
  const changed = await post(app, 'createOrder', { ...body, reference: 'cart_2' }, { 'idempotency-key': 'checkout-1' })
  t.equal(changed.status, 422)
  const without = await post(app, 'createOrder', orderBody(), { 'idempotency-key': 'checkout-1' })
  t.equal(without.status, 422, 'leaving the reference out is another body too')
})

t.test('a body without a reference keeps the fingerprint it had before references existed', async t => {
  const body = orderBody({ metadata: { b: '2', a: '1' } })
  const before = createHash('sha256')
    .update(JSON.stringify([body.customerId, body.currency, [['A-1', 'Mug', 2, 1250]], [['a', '1'], ['b', '2']]]))
    .digest('base64url')
  t.equal(fingerprintOf(body), before)
  t.not(fingerprintOf({ ...body, reference: 'r' }), before)
})

t.test('filter.number and filter.reference find orders, alone and with other filters', async t => {
  const app = await buildApp(t)
  const a = await createOrder(app, { reference: 'shared' })
  const b = await createOrder(app, { customerId: 'cus_b', reference: 'shared' })
  const c = await createOrder(app, { customerId: 'cus_b', reference: 'only_b' })
  await post(app, 'updateOrderStatus', { id: b.id, status: 'paid' })
  t.same(await list(app, { number: a.number }), [a.id])
  t.same(await list(app, { number: c.number + 1000 }), [], 'an unknown number finds nothing')
  t.same(await list(app, { number: b.number, status: 'paid' }), [b.id])
  t.same(await list(app, { number: b.number, status: 'pending' }), [])
  t.same(await list(app, { number: b.number, customerId: 'cus_42' }), [])
  t.same(await list(app, { number: a.number, ids: [a.id, c.id] }), [a.id])
  t.same(await list(app, { number: a.number, reference: 'other' }), [])
  t.same(await list(app, { reference: 'shared' }), [a.id, b.id], 'every customer\'s order with it, in page order')
  t.same(await list(app, { reference: 'shared', customerId: 'cus_b' }), [b.id])
  t.same(await list(app, { reference: 'shared', status: ['paid'] }), [b.id])
  t.same(await list(app, { reference: 'shared', ids: [a.id] }), [a.id])
  t.same(await list(app, { reference: 'shared', createdFrom: '2100-01-01T00:00:00.000Z' }), [], 'combined with a created range')
  t.same(await list(app, { reference: 'shared', createdTo: '2100-01-01T00:00:00.000Z' }), [a.id, b.id])
  t.same(await list(app, { reference: 'missing' }), [])

  // Cursors are bound to these filters like any other.
  const first = await post(app, 'getOrderList', { filter: { reference: 'shared' }, limit: 1 })
  t.same(first.body.items.map((order: Order) => order.id), [b.id])
  const next = await post(app, 'getOrderList', { filter: { reference: 'shared' }, limit: 1, cursor: first.body.nextCursor })
  t.same(next.body.items.map((order: Order) => order.id), [a.id])
  t.equal(next.body.nextCursor, null)
  const moved = await post(app, 'getOrderList', { filter: { reference: 'only_b' }, limit: 1, cursor: first.body.nextCursor })
  t.equal(moved.body.code, 'ORDER_INVALID_CURSOR', 'a cursor of another reference')
  const byNumber = await post(app, 'getOrderList', { filter: { number: a.number }, cursor: first.body.nextCursor })
  t.equal(byNumber.body.code, 'ORDER_INVALID_CURSOR', 'a cursor of another filter')
})

t.test('with a scope, number and reference find only the caller\'s orders', async t => {
  const app = await buildApp(t, {
    authorize: (request: FastifyRequest) => {
      const customer = request.headers['x-customer']
      return typeof customer === 'string' ? { customerId: customer } : true
    }
  })
  const mine = await createOrder(app, { customerId: 'cus_me', reference: 'cart_1' })
  const theirs = await createOrder(app, { customerId: 'cus_them', reference: 'cart_1' })
  const me = { 'x-customer': 'cus_me' }
  t.same(await list(app, { reference: 'cart_1' }, me), [mine.id])
  t.same(await list(app, { number: theirs.number }, me), [], 'another customer\'s number reveals nothing')
  t.same(await list(app, { number: mine.number }, me), [mine.id])
  const again = await post(app, 'createOrder', orderBody({ customerId: 'cus_me', reference: 'cart_1' }), me)
  t.equal(again.body.code, 'ORDER_REFERENCE_TAKEN', 'the caller learns only of its own reference')
  const fresh = await post(app, 'createOrder', orderBody({ customerId: 'cus_me', reference: 'cart_2' }), me)
  t.equal(fresh.status, 201)
})

t.test('a reference must be 1 to 128 visible ASCII characters; a number filter a positive integer', async t => {
  const app = await buildApp(t)
  for (const reference of ['', 'x'.repeat(129), 'with space', 'café', 'tab\t', 42, null]) {
    const { status, body } = await post(app, 'createOrder', { ...orderBody(), reference })
    t.equal(status, 400, JSON.stringify(reference))
    t.equal(body.code, 'FST_ERR_VALIDATION')
  }
  t.equal((await post(app, 'createOrder', orderBody({ reference: '~'.repeat(128) }))).status, 201)
  for (const number of [0, -1, 1.5, '1', null]) {
    t.equal((await post(app, 'getOrderList', { filter: { number } })).status, 400, JSON.stringify(number))
  }
  t.equal((await post(app, 'getOrderList', { filter: { reference: '' } })).status, 400)
  t.equal((await post(app, 'createOrder', { ...orderBody(), number: 7 })).status, 400, 'the client cannot choose the number')
})
