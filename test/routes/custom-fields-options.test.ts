// The customFields option: checked at register, and its schemas refuse unknown keys unless they allow them.
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import orderPlugin, { type OrderPluginOptions } from '../../lib/index.js'
import { buildApp, orderBody, post } from '../helper.js'

async function registerFails (t: Test, customFields: unknown, message: RegExp, name: string) {
  const app = Fastify()
  app.register(orderPlugin, { customFields } as OrderPluginOptions)
  await t.rejects(async () => { await app.ready() }, { code: 'ORDER_INVALID_OPTIONS', message }, name)
  await app.close()
}

const Shipping = Type.Object({ address: Type.Object({ city: Type.String() }) })

t.test('customFields is checked at register, with a message that says what to pass', async t => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['a string', 'shipping', /customFields must be an object like \{ order: Type.Object/],
    ['an array', [Shipping], /customFields must be an object like/],
    ['null', null, /customFields must be an object like/],
    ['a misspelt kind', { orders: Shipping }, /customFields\.orders is not supported; use customFields\.order or customFields\.item/],
    ['a string schema', { order: Type.String() }, /customFields\.order must be an object schema such as Type\.Object\(.*got a schema of type "string"/],
    ['an array schema', { item: Type.Array(Type.String()) }, /customFields\.item must be an object schema/],
    ['a union of objects', { order: Type.Union([Shipping, Type.Object({ pickup: Type.Boolean() })]) }, /customFields\.order must be an object schema.*got a schema of type null/],
    ['a value that is no schema', { item: 'giftNote' }, /customFields\.item must be an object schema.*got "giftNote"/],
    ['a function that makes a schema', { order: () => Shipping }, /customFields\.order must be an object schema.*got function/],
    ['properties that are not an object', { order: { type: 'object', properties: ['city'] } }, /customFields\.order must be an object schema/],
    ['a recursive schema', { order: Type.Recursive(This => Type.Object({ parts: Type.Array(This) })) }, /customFields\.order has a \$ref at #\/properties\/parts\/items; custom field schemas must be self-contained/],
    ['an intersection', { order: Type.Intersect([Shipping, Type.Object({ taxId: Type.String() })]) }, /customFields\.order combines object schemas with allOf at #, where unknown keys cannot be refused; merge them into one Type\.Object \(Type\.Composite\)/],
    ['an object beside alternatives of objects', {
      item: Type.Unsafe({ type: 'object', properties: { kind: Type.String() }, anyOf: [Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })] })
    }, /customFields\.item combines object schemas with anyOf at #,/],
    ['a nested intersection', { item: Type.Object({ box: Type.Intersect([Shipping, Shipping]) }) }, /customFields\.item combines object schemas with allOf at #\/properties\/box,/],
    ['a type the validator does not know', { order: Type.Object({ shippedOn: Type.Date() }) }, /customFields\.order is not a schema the validator accepts: .*properties\/shippedOn\/type/],
    ['an empty union', { order: Type.Object({ kind: Type.Unsafe({ anyOf: [] }) }) }, /customFields\.order is not a schema the validator accepts: .*properties\/kind\/anyOf must NOT have fewer than 1 items/],
    ['an unknown format', { order: Type.Object({ vat: Type.String({ format: 'vat-number' }) }) }, /customFields\.order is not a schema the validator accepts: unknown format "vat-number"/]
  ]
  for (const [name, customFields, message] of cases) await registerFails(t, customFields, message, name)
})

t.test('register leaves the host\'s schemas as they were', async t => {
  const Address = Type.Object({ city: Type.String(), lines: Type.Array(Type.Object({ text: Type.String() })) }, { $id: 'Address' })
  const Order = Type.Object({ address: Address, choice: Type.Optional(Type.Union([Type.Object({ a: Type.String() }), Type.Null()])) })
  const before = JSON.stringify(Order)
  const app = await buildApp(t, { customFields: { order: Order, item: Address } })
  t.equal(JSON.stringify(Order), before)
  t.equal(Address.additionalProperties, undefined)
  t.equal(Order.properties.address, Address, 'the host\'s objects are not replaced either')
  t.equal((await post(app, 'createOrder', orderBody({ customFields: { address: { city: 'Lyon', lines: [] }, extra: 1 } } as never))).status, 400)
})

t.test('a schema built with options left undefined works like one without them', async t => {
  const limit: number | undefined = undefined
  const app = await buildApp(t, { customFields: { order: Type.Object({ note: Type.String({ maxLength: limit }) }, { additionalProperties: undefined }) } })
  t.equal((await post(app, 'createOrder', orderBody({ customFields: { note: 'n'.repeat(1000) } } as never))).status, 201)
  t.equal((await post(app, 'createOrder', orderBody({ customFields: { note: 'n', extra: 1 } } as never))).status, 400,
    'additionalProperties left undefined is not an explicit allowance')
})

t.test('formats Fastify validates are known to the custom field schemas', async t => {
  const app = await buildApp(t, { customFields: { order: Type.Object({ contact: Type.String({ format: 'email' }), on: Type.String({ format: 'date' }) }) } })
  const body = (contact: string) => orderBody({ customFields: { contact, on: '2026-02-01' } } as never)
  t.equal((await post(app, 'createOrder', body('jo@example.com'))).status, 201)
  t.equal((await post(app, 'createOrder', body('not an address'))).status, 400)
})

t.test('an empty customFields option is the same as none', async t => {
  for (const customFields of [{}, { order: undefined, item: undefined }]) {
    const app = await buildApp(t, { customFields })
    const { status, body } = await post(app, 'createOrder', { ...orderBody(), customFields: {} })
    t.equal(status, 400, JSON.stringify(customFields))
    t.equal(body.code, 'FST_ERR_VALIDATION')
  }
})
