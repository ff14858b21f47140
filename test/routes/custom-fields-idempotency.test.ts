// Idempotency keys and custom fields: the fingerprint covers them, and a body without them keeps its old one.
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { address, bodyWith, Gift, Shipping } from '../custom-field-schemas.js'
import { buildApp, orderBody, post, testStorage } from '../helper.js'

const customFields = { order: Shipping, item: Gift }
const key = (value: string) => ({ 'idempotency-key': value })

t.test('a body without custom fields keeps its fingerprint when the option is set later', async t => {
  const storage = await testStorage(t)
  const before = await buildApp(t, { storage })
  const first = await post(before, 'createOrder', orderBody(), key('checkout-1'))

  const optional = { order: Type.Object({ taxId: Type.Optional(Type.String()) }), item: Gift }
  const after = await buildApp(t, { storage, customFields: optional })
  const retry = await post(after, 'createOrder', orderBody(), key('checkout-1'))
  t.equal(retry.status, 201)
  t.equal(retry.headers['idempotent-replayed'], 'true', 'the key stored before the option still matches')
  t.equal(retry.body.id, first.body.id)
  const reused = await post(after, 'createOrder', bodyWith({ taxId: 'FR1' }), key('checkout-1'))
  t.equal(reused.status, 422, 'a body with custom fields is another body')
})

t.test('a retry with the same custom fields in another key order is a replay', async t => {
  const app = await buildApp(t, { customFields })
  const first = await post(app, 'createOrder', bodyWith({ address, weightKg: 1.5, insured: true }, { giftNote: 'hi', wrapped: true }), key('k'))
  const reordered = { insured: true, weightKg: 1.5, address: { country: 'FR', city: 'Paris', lines: ['12 rue de la Paix'], name: 'Jo Martin' } }
  const retry = await post(app, 'createOrder', bodyWith(reordered, { wrapped: true, giftNote: 'hi' }), key('k'))
  t.equal(retry.headers['idempotent-replayed'], 'true')
  t.equal(retry.body.id, first.body.id)
})

t.test('empty custom fields count as none, as they store the same order', async t => {
  const app = await buildApp(t, { customFields: { order: Type.Object({ taxId: Type.Optional(Type.String()) }), item: Gift } })
  const first = await post(app, 'createOrder', bodyWith({}, {}, {}), key('k'))
  const retry = await post(app, 'createOrder', bodyWith(undefined, undefined, undefined), key('k'))
  t.equal(retry.headers['idempotent-replayed'], 'true')
  t.equal(retry.body.id, first.body.id)
})

t.test('a retry whose custom fields differ anywhere is 422 ORDER_IDEMPOTENCY_KEY_REUSED', async t => {
  const app = await buildApp(t, { customFields })
  const fields = { address, parcels: [{ ref: 'p-1', grams: 500 }] }
  const first = await post(app, 'createOrder', bodyWith(fields, { giftNote: 'hi' }, {}), key('k'))
  t.equal(first.status, 201)
  const changes: Array<[string, object]> = [
    ['a nested value', bodyWith({ ...fields, address: { ...address, city: 'Lyon' } }, { giftNote: 'hi' }, {})],
    ['an added key', bodyWith({ ...fields, insured: false }, { giftNote: 'hi' }, {})],
    ['a removed key', bodyWith({ address }, { giftNote: 'hi' }, {})],
    ['a value in an array', bodyWith({ ...fields, parcels: [{ ref: 'p-1', grams: 501 }] }, { giftNote: 'hi' }, {})],
    ['an item\'s custom fields', bodyWith(fields, { giftNote: 'hello' }, {})],
    ['custom fields moved to another item', bodyWith(fields, {}, { giftNote: 'hi' })],
    ['a key added to an item\'s empty custom fields', bodyWith(fields, { giftNote: 'hi' }, { giftNote: '' })]
  ]
  for (const [name, body] of changes) {
    const reused = await post(app, 'createOrder', body, key('k'))
    t.equal(reused.status, 422, name)
    t.equal(reused.body.code, 'ORDER_IDEMPOTENCY_KEY_REUSED', name)
  }
  t.equal((await post(app, 'getOrderList', {})).body.items.length, 1)
})

t.test('custom fields on the order only, or on items only, are covered by the fingerprint', async t => {
  const cases = [
    { option: { order: Shipping }, first: bodyWith({ address }), changed: bodyWith({ address, insured: true }) },
    { option: { item: Gift }, first: bodyWith(undefined, { giftNote: 'hi' }), changed: bodyWith(undefined, { giftNote: 'ho' }) }
  ]
  for (const { option, first, changed } of cases) {
    const app = await buildApp(t, { customFields: option })
    const created = await post(app, 'createOrder', first, key('k'))
    const retry = await post(app, 'createOrder', first, key('k'))
    t.equal(retry.body.id, created.body.id, Object.keys(option).join())
    t.equal((await post(app, 'createOrder', changed, key('k'))).status, 422, Object.keys(option).join())
  }
})
