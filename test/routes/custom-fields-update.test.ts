// updateOrderStatus with a customFields patch: applied with the move, in the same compare-and-set.
import { Type } from '@sinclair/typebox'
import t from 'tap'
import type { Order } from '../../lib/index.js'
import { address, bodyWith, Gift, Shipping } from '../custom-field-schemas.js'
import { buildApp, createOrder, orderBody, post, testStorage } from '../helper.js'

const customFields = { order: Shipping, item: Gift }

async function shippingOrder (app: Awaited<ReturnType<typeof buildApp>>, fields: object = { address, insured: true }) {
  const order = await createOrder(app, bodyWith(fields, { giftNote: 'hi' }) as never)
  return (await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })).body
}

async function stored (app: Awaited<ReturnType<typeof buildApp>>, id: string) {
  return (await post(app, 'getOrderList', { filter: { ids: [id] } })).body.items[0]
}

t.test('a patch is applied with the move: a key given replaces its value, null removes an optional key', async t => {
  const app = await buildApp(t, { customFields })
  const paid = await shippingOrder(app, { address, insured: true, weightKg: 1.5 })
  const { status, body } = await post(app, 'updateOrderStatus', {
    id: paid.id,
    status: 'shipped',
    customFields: { trackingNumber: 'TRK-42', insured: null, weightKg: 2, address: { ...address, city: 'Lyon' } }
  })
  t.equal(status, 200)
  t.equal(body.version, 3)
  t.same(body.customFields, { address: { ...address, city: 'Lyon' }, weightKg: 2, trackingNumber: 'TRK-42' })
  t.same(body.items, paid.items, 'item custom fields are set at creation only')
  t.same(await stored(app, paid.id), body)
})

t.test('a move without a patch keeps the custom fields as they are', async t => {
  const app = await buildApp(t, { customFields })
  const paid = await shippingOrder(app)
  const shipped = (await post(app, 'updateOrderStatus', { id: paid.id, status: 'shipped' })).body
  t.same(shipped.customFields, paid.customFields)
  const empty = (await post(app, 'updateOrderStatus', { id: paid.id, status: 'delivered', customFields: {} })).body
  t.same(empty.customFields, paid.customFields)
  t.equal(empty.version, 4)
})

t.test('a patch that breaks the schema is a 400 and stores nothing', async t => {
  const storage = await testStorage(t)
  const app = await buildApp(t, { storage, customFields })
  const paid = await shippingOrder(app)
  const patches = [
    { address: null },
    { trackingNumber: 42 },
    { trackingNumber: '' },
    { weightKg: '2' },
    { carrier: { kind: 'post' } },
    { address: { ...address, zip: '1' } },
    { carrierName: 'UPS' },
    { giftNote: 'items are set at creation only' }
  ]
  for (const patch of patches) {
    const { status, body } = await post(app, 'updateOrderStatus', { id: paid.id, status: 'shipped', customFields: patch })
    t.equal(status, 400, JSON.stringify(patch))
    t.equal(body.code, 'FST_ERR_VALIDATION')
  }
  t.same(await stored(app, paid.id), paid)

  // Custom fields stored before the option: the patched result must still have the required address.
  const before = await createOrder(await buildApp(t, { storage }))
  const result = await post(app, 'updateOrderStatus', { id: before.id, status: 'paid', customFields: { trackingNumber: 'T' } })
  t.equal(result.status, 400)
  t.match(result.body.message, /body\/customFields must have required property 'address'/)
  t.same(await stored(app, before.id), before)
  const patched = await post(app, 'updateOrderStatus', { id: before.id, status: 'paid', customFields: { address } })
  t.same(patched.body.customFields, { address }, 'a patch gives an older order custom fields')
})

t.test('a same-status request whose patch changes nothing is the usual no-op', async t => {
  const app = await buildApp(t, { customFields })
  const paid = await shippingOrder(app)
  const move = { id: paid.id, status: 'shipped', customFields: { trackingNumber: 'TRK-42', weightKg: null } }
  const shipped = (await post(app, 'updateOrderStatus', move)).body
  const retried = await post(app, 'updateOrderStatus', move)
  t.equal(retried.status, 200)
  t.same(retried.body, shipped, 'same version, no new history entry')
  const reordered = await post(app, 'updateOrderStatus', {
    id: paid.id, status: 'shipped', customFields: { address: { country: 'FR', city: 'Paris', lines: ['12 rue de la Paix'], name: 'Jo Martin' } }
  })
  t.same(reordered.body, shipped, 'equal values in another key order change nothing')
})

t.test('a same-status request whose patch would change the order is 409 ORDER_INVALID_TRANSITION', async t => {
  const app = await buildApp(t, { customFields })
  const paid = await shippingOrder(app)
  for (const patch of [{ trackingNumber: 'TRK-1' }, { insured: null }, { insured: false }, { parcels: [] }]) {
    const { status, body } = await post(app, 'updateOrderStatus', { id: paid.id, status: 'paid', customFields: patch })
    t.equal(status, 409, JSON.stringify(patch))
    t.equal(body.code, 'ORDER_INVALID_TRANSITION')
  }
  t.same(await stored(app, paid.id), paid)
})

t.test('a stale expectedVersion is checked before the patch', async t => {
  const app = await buildApp(t, { customFields })
  const paid = await shippingOrder(app)
  for (const status of ['paid', 'shipped']) {
    const { body } = await post(app, 'updateOrderStatus', { id: paid.id, status, expectedVersion: 1, customFields: { trackingNumber: 'T' } })
    t.equal(body.code, 'ORDER_VERSION_CONFLICT', status)
  }
  const { body } = await post(app, 'updateOrderStatus', { id: paid.id, status: 'shipped', expectedVersion: 2, customFields: { address: null } })
  t.equal(body.code, 'FST_ERR_VALIDATION')
})

t.test('a forbidden move with a patch is 409 and stores nothing', async t => {
  const app = await buildApp(t, { customFields })
  const paid = await shippingOrder(app)
  const { status, body } = await post(app, 'updateOrderStatus', { id: paid.id, status: 'pending', customFields: { trackingNumber: 'T' } })
  t.equal(status, 409)
  t.equal(body.code, 'ORDER_INVALID_TRANSITION')
  t.same(await stored(app, paid.id), paid)
})

t.test('without an order schema, customFields in an update is a 400', async t => {
  const app = await buildApp(t, { customFields: { item: Gift } })
  const order = await createOrder(app)
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid', customFields: {} })
  t.equal(status, 400)
  t.equal(body.code, 'FST_ERR_VALIDATION')
})

t.test('concurrent moves with patches: exactly one is stored, with its own patch', async t => {
  const app = await buildApp(t, { customFields })
  const paid = await shippingOrder(app)
  const responses = await Promise.all(Array.from({ length: 10 }, (_, i) =>
    post(app, 'updateOrderStatus', { id: paid.id, status: 'shipped', customFields: { trackingNumber: `TRK-${i}` } })))
  const winners = responses.filter(response => response.status === 200)
  t.equal(winners.length, 1, 'the others find the order shipped with another tracking number')
  for (const { status, body } of responses) {
    if (status !== 200) t.equal(body.code, 'ORDER_INVALID_TRANSITION')
  }
  const final = await stored(app, paid.id)
  t.same(final, winners[0]!.body)
  t.equal(final.version, 3)
})

t.test('app.orders.updateStatus applies a patch like the route, and keeps its own copy', async t => {
  const app = await buildApp(t, { customFields })
  const moves: unknown[] = []
  app.orders.on('statusChanged', ({ order }) => { moves.push((order as { customFields?: unknown }).customFields) })
  const paid = await shippingOrder(app)
  const parcels = [{ ref: 'p-1', grams: 500 }]
  const shipped = await app.orders.updateStatus({ id: paid.id, status: 'shipped', customFields: { parcels } } as never) as Order & { customFields: object }
  t.same(shipped.customFields, { ...paid.customFields, parcels })
  t.notOk(Object.isFrozen(parcels[0]), 'the caller\'s objects stay theirs')
  parcels[0]!.grams = 1
  t.same((await stored(app, paid.id)).customFields.parcels, [{ ref: 'p-1', grams: 500 }])
  t.same(moves.at(-1), shipped.customFields, 'listeners see the patched custom fields')
  await t.rejects(app.orders.updateStatus({ id: paid.id, status: 'delivered', customFields: { address: null } } as never), { code: 'FST_ERR_VALIDATION' })
  await t.rejects(app.orders.updateStatus({ id: paid.id, status: 'shipped', customFields: { insured: false } } as never), { code: 'ORDER_INVALID_TRANSITION' })
})

t.test('null removes a key the schema allows beyond its properties', async t => {
  const app = await buildApp(t, { customFields: { order: Type.Object({ ref: Type.String() }, { additionalProperties: Type.String() }) } })
  const order = await createOrder(app, bodyWith({ ref: 'r', note: 'n', tag: 't' }) as never)
  const { body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid', customFields: { note: null, extra: 'e' } })
  t.same(body.customFields, { ref: 'r', tag: 't', extra: 'e' })
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'shipped', customFields: { extra: 1 } })).status, 400)
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'shipped', customFields: { ref: null } })).status, 400)
  t.equal((await post(app, 'createOrder', orderBody())).status, 400, 'ref is required')
})

t.test('with a record schema, a patch adds and removes keys', async t => {
  const app = await buildApp(t, { customFields: { order: Type.Record(Type.String({ pattern: '^[a-z]+$' }), Type.String()) } })
  const order = await createOrder(app, bodyWith({ color: 'red', size: 'L' }) as never)
  const { body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid', customFields: { size: null, fit: 'slim' } })
  t.same(body.customFields, { color: 'red', fit: 'slim' })
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'shipped', customFields: { fit: 1 } })).status, 400)
})
