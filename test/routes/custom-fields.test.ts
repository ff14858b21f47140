// Custom fields on orders and items: validated strictly, stored, returned and documented; absent without the option.
import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import t from 'tap'
import orderPlugin, { buildOrderSchemas, type Order, type OrderStorage } from '../../lib/index.js'
import { address, bodyWith, Gift, Shipping } from '../custom-field-schemas.js'
import { buildApp, createOrder, orderBody, post, testStorage } from '../helper.js'

const customFields = { order: Shipping, item: Gift }

t.test('an order and its items carry the custom fields they were created with', async t => {
  const app = await buildApp(t, { customFields })
  const fields = { address, trackingNumber: 'TRK-1', carrier: { kind: 'post', service: 'letter' } }
  const { status, body } = await post(app, 'createOrder', bodyWith(fields, { giftNote: 'Happy birthday!', wrapped: true }, undefined))
  t.equal(status, 201)
  t.same(body.customFields, fields)
  t.same(body.items.map((item: { customFields: object }) => item.customFields), [{ giftNote: 'Happy birthday!', wrapped: true }, {}],
    'an item created without custom fields gets {}')
  t.same((await post(app, 'getOrderList', {})).body.items, [body], 'stored and read back as returned')
  t.same((await app.orders.list()).items, [body])
})

t.test('custom field values come back exactly: nested objects, floats, large integers, booleans, arrays and unicode', async t => {
  const app = await buildApp(t, { customFields })
  const fields = {
    address: { name: 'Zoë Ångström 😀 שלום \u0000', lines: ['1', 'Bâtiment « B »'], city: 'Zürich', country: 'CH' },
    insured: false,
    weightKg: 0.1 + 0.2,
    parcels: [{ ref: 'p-1', grams: Number.MAX_SAFE_INTEGER }, { ref: 'p-2', grams: 0 }],
    carrier: { kind: 'courier', company: 'Ünï Express', express: true }
  }
  const created = await post(app, 'createOrder', bodyWith(fields, { giftNote: '🎁 ✓ "quoted" \\ \'single\'' }))
  t.same(created.body.customFields, fields)
  t.equal(created.body.customFields.weightKg, 0.30000000000000004)
  t.equal(created.body.customFields.parcels[0].grams, 9007199254740991)
  const [stored] = (await post(app, 'getOrderList', {})).body.items
  t.strictSame(stored.customFields, fields)
  t.strictSame(stored.items[0].customFields, { giftNote: '🎁 ✓ "quoted" \\ \'single\'' })
})

t.test('custom fields are validated as strictly as the rest of the body, and nothing is stored', async t => {
  const app = await buildApp(t, { customFields })
  const cases: Array<[string, object]> = [
    ['no customFields where the schema has required keys', bodyWith(undefined)],
    ['a missing required key', bodyWith({ address: { ...address, city: undefined } })],
    ['an unknown key', bodyWith({ address, trackingNumbr: 'T' })],
    ['an unknown key in a nested object', bodyWith({ address: { ...address, zip: '75002' } })],
    ['an unknown key in an array of objects', bodyWith({ address, parcels: [{ ref: 'p', grams: 1, fragile: true }] })],
    ['an unknown key in one of a union\'s objects', bodyWith({ address, carrier: { kind: 'post', service: 'letter', express: true } })],
    ['an unknown key in an item\'s custom fields', bodyWith({ address }, { giftNote: 'hi', price: 1 })],
    ['"1" for a number', bodyWith({ address, weightKg: '1' })],
    ['"true" for a boolean', bodyWith({ address, insured: 'true' })],
    ['a number for a string', bodyWith({ address, trackingNumber: 42 })],
    ['null for a string', bodyWith({ address: { ...address, city: null } })],
    ['"2" for an integer in an array', bodyWith({ address, parcels: [{ ref: 'p', grams: '2' }] })],
    ['1 for an item\'s boolean', bodyWith({ address }, { wrapped: 1 })],
    ['a pattern the schema refuses', bodyWith({ address: { ...address, country: 'fr' } })],
    ['a string for the custom fields', bodyWith('address' as never)],
    ['an array for an item\'s custom fields', bodyWith({ address }, [])]
  ]
  for (const [name, body] of cases) {
    const response = await post(app, 'createOrder', body)
    t.equal(response.status, 400, name)
    t.equal(response.body.code, 'FST_ERR_VALIDATION', name)
  }
  t.same((await post(app, 'getOrderList', {})).body.items, [])
  await t.rejects(app.orders.create(bodyWith({ address: { ...address, zip: '75002' } }) as never), { code: 'FST_ERR_VALIDATION', statusCode: 400 },
    'app.orders validates the same way')
})

t.test('unknown keys are accepted, and returned, only where the schema explicitly allows them', async t => {
  const order = Type.Object({
    attributes: Type.Record(Type.String(), Type.String()),
    open: Type.Object({ id: Type.String() }, { additionalProperties: true }),
    closed: Type.Optional(Type.Object({ id: Type.String() }))
  })
  const app = await buildApp(t, { customFields: { order } })
  const fields = { attributes: { color: 'red', size: 'L' }, open: { id: 'x', anything: [1, { deep: true }] } }
  const created = await post(app, 'createOrder', bodyWith(fields))
  t.equal(created.status, 201)
  t.same(created.body.customFields, fields)
  t.equal((await post(app, 'createOrder', bodyWith({ ...fields, closed: { id: 'y', extra: 1 } }))).status, 400)
  t.equal((await post(app, 'createOrder', bodyWith({ ...fields, extra: 1 }))).status, 400)
  t.equal((await post(app, 'createOrder', bodyWith({ ...fields, attributes: { color: 1 } }))).status, 400)
})

t.test('unknown keys are refused in tuples and in objects that may be null too', async t => {
  const order = Type.Object({
    pair: Type.Optional(Type.Tuple([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })])),
    billing: Type.Optional(Type.Unsafe<{ vat: string } | null>({ type: ['object', 'null'], properties: { vat: { type: 'string' } } }))
  })
  const app = await buildApp(t, { customFields: { order } })
  t.equal((await post(app, 'createOrder', bodyWith({ pair: [{ a: 'x' }, { b: 'y' }], billing: null }))).status, 201)
  t.equal((await post(app, 'createOrder', bodyWith({ billing: { vat: 'FR1' } }))).status, 201)
  t.equal((await post(app, 'createOrder', bodyWith({ pair: [{ a: 'x' }, { b: 'y', c: 'z' }] }))).status, 400)
  t.equal((await post(app, 'createOrder', bodyWith({ billing: { vat: 'FR1', iban: 'x' } }))).status, 400)
})

t.test('customFields may be left out when its schema has no required keys, and becomes {}', async t => {
  const app = await buildApp(t, { customFields: { order: Type.Object({ taxId: Type.Optional(Type.String()) }), item: Gift } })
  const { status, body } = await post(app, 'createOrder', orderBody())
  t.equal(status, 201)
  t.same(body.customFields, {})
  t.same(body.items[0].customFields, {})
  const required = await buildApp(t, { customFields: { item: Type.Object({ giftNote: Type.String() }) } })
  const missing = await post(required, 'createOrder', orderBody())
  t.equal(missing.status, 400, 'an item schema with required keys makes each item\'s customFields required')
  t.match(missing.body.message, /customFields/)
  t.equal((await post(required, 'createOrder', bodyWith(undefined, { giftNote: 'hi' }))).status, 201)
})

/** A storage whose reads add keys inside custom fields, as a careless adapter might. */
function leakyStorage (inner: OrderStorage): OrderStorage {
  const leak = (order: Order): Order => {
    const stored = order as Order & { customFields?: Record<string, unknown> }
    if (stored.customFields === undefined) return order
    const carrier = stored.customFields.carrier as object | undefined
    return {
      ...stored,
      customFields: {
        ...stored.customFields,
        secret: 'internal',
        address: { ...stored.customFields.address as object, secret: 'internal' },
        ...(carrier && { carrier: { ...carrier, secret: 'internal' } })
      },
      items: order.items.map(item => ({ ...item, customFields: { ...(item as { customFields?: object }).customFields, secret: 'internal' } }))
    } as Order
  }
  return {
    ...inner,
    get: async (id) => { const order = await inner.get(id); return order && leak(order) },
    list: async (query) => (await inner.list(query)).map(leak)
  }
}

t.test('keys an adapter adds inside custom fields never reach a client', async t => {
  const app = await buildApp(t, { customFields, storage: leakyStorage(await testStorage(t)) })
  const fields = { address, carrier: { kind: 'courier', company: 'Acme', express: false } }
  const created = await post(app, 'createOrder', bodyWith(fields, { giftNote: 'hi' }))
  const listed = await post(app, 'getOrderList', {})
  t.equal(listed.status, 200)
  t.same(listed.body.items[0].customFields, fields)
  t.same(listed.body.items[0].items[0].customFields, { giftNote: 'hi' })
  const paid = await post(app, 'updateOrderStatus', { id: created.body.id, status: 'paid' })
  t.equal(paid.status, 200)
  t.notMatch(JSON.stringify([listed.body, paid.body]), /secret/)
})

t.test('without the customFields option, sending custom fields is a 400 and none are ever returned', async t => {
  const storage = await testStorage(t)
  const withFields = await buildApp(t, { storage, customFields })
  const order = await createOrder(withFields, bodyWith({ address }, { giftNote: 'hi' }) as never)

  const app = await buildApp(t, { storage })
  for (const body of [bodyWith({}), bodyWith(undefined, {})]) {
    const { status, body: error } = await post(app, 'createOrder', body)
    t.equal(status, 400)
    t.equal(error.code, 'FST_ERR_VALIDATION')
  }
  const update = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid', customFields: {} })
  t.equal(update.status, 400)
  const [listed] = (await post(app, 'getOrderList', {})).body.items
  t.notOk('customFields' in listed, 'an order stored with custom fields is served without them')
  t.notOk('customFields' in listed.items[0])
})

t.test('orders stored before the option was set come back without customFields', async t => {
  const storage = await testStorage(t)
  const before = await createOrder(await buildApp(t, { storage }))
  const app = await buildApp(t, { storage, customFields })
  const [listed] = (await post(app, 'getOrderList', {})).body.items
  t.same(listed, before)
  t.notOk('customFields' in listed)
  t.notOk('customFields' in listed.items[0])
  const paid = await post(app, 'updateOrderStatus', { id: before.id, status: 'paid' })
  t.equal(paid.status, 200)
  t.notOk('customFields' in paid.body, 'a move without a patch leaves them absent')
  t.notOk('customFields' in (await app.orders.list()).items[0]!)
})

t.test('listeners and app.orders get the custom fields, frozen, and never share the caller\'s objects', async t => {
  type ShippedOrder = Order & { customFields: { address: { lines: string[] } }, items: Array<{ customFields: { giftNote: string } }> }
  const app = await buildApp(t, { customFields })
  const seen: unknown[] = []
  app.orders.on('created', order => { seen.push((order as ShippedOrder).customFields) })
  app.orders.on('statusChanged', ({ order }) => { seen.push((order as ShippedOrder).customFields) })
  const input = {
    ...orderBody(),
    items: [{ sku: 'A-1', quantity: 1, unitPrice: 100, customFields: { giftNote: 'hi' } }],
    customFields: { address: { ...address, lines: ['1 Main St'] } }
  }
  const order = await app.orders.create(input) as ShippedOrder
  t.same(order.customFields, input.customFields)
  t.throws(() => { order.customFields.address.lines.push('2') }, TypeError, 'nested custom fields are frozen')
  t.throws(() => { order.items[0]!.customFields.giftNote = 'bye' }, TypeError)
  t.notOk(Object.isFrozen(input.customFields.address), 'the caller\'s objects stay theirs')
  input.customFields.address.lines.push('changed')
  input.items[0]!.customFields.giftNote = 'changed'
  await app.orders.updateStatus({ id: order.id, status: 'paid' })
  const stored = (await app.orders.list()).items[0] as ShippedOrder
  t.same(stored.customFields.address.lines, ['1 Main St'])
  t.same(stored.items[0]!.customFields, { giftNote: 'hi' })
  t.same(seen, [order.customFields, order.customFields])
})

t.test('OpenAPI shows custom fields in the request bodies and in the Order component', async t => {
  const openapiOf = async (options: object) => {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(swagger, {
      openapi: { info: { title: 'orders', version: '1.0.0' } },
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) }
    })
    await app.register(orderPlugin, options)
    await app.ready()
    return app.swagger() as unknown as { paths: Record<string, any>, components: { schemas: Record<string, any> } }
  }
  const spec = await openapiOf({ customFields })
  const body = (operation: string) => spec.paths[`/order/${operation}`].post.requestBody.content['application/json'].schema
  const create = body('createOrder')
  t.ok(create.required.includes('customFields'), 'required: the shipping schema has required keys')
  t.match(create.properties.customFields, { type: 'object', additionalProperties: false, properties: { address: { additionalProperties: false } } },
    'the request shows that unknown keys are refused')
  t.match(create.properties.items.items.properties.customFields, { properties: { giftNote: { maxLength: 200 } }, additionalProperties: false })
  t.match(body('updateOrderStatus').properties.customFields, { type: 'object', properties: { trackingNumber: {}, address: { type: 'object' } } })
  t.notOk(body('updateOrderStatus').required.includes('customFields'))
  const order = spec.components.schemas.Order
  t.match(order.properties.customFields, { type: 'object', properties: { address: { properties: { city: { type: 'string' } } } } })
  t.notOk(order.required.includes('customFields'), 'orders stored before the option have none')
  t.match(order.properties.items.items.properties.customFields, { properties: { giftNote: { type: 'string' } } })

  const without = await openapiOf({})
  t.notMatch(JSON.stringify(without), /customFields/)
})

t.test('a union of literals is validated, returned and documented as an enum; other unions stay as written', async t => {
  const Delivery = Type.Object({
    priority: Type.Union([Type.Literal('standard'), Type.Literal('express')]),
    size: Type.Optional(Type.Union([Type.Literal(1), Type.Literal('one')])),
    tier: Type.Optional(Type.Union([Type.Literal('a', { description: 'the first tier' }), Type.Literal('b')])),
    lane: Type.Optional(Type.Unsafe<'x' | 'y'>({ type: 'string', anyOf: [{ const: 'x', type: 'string' }, { const: 'y', type: 'string' }] }))
  })
  const app = await buildApp(t, { customFields: { order: Delivery } })
  const fields = { priority: 'express', size: 1, tier: 'a', lane: 'y' }
  const created = await post(app, 'createOrder', bodyWith(fields))
  t.equal(created.status, 201)
  t.strictSame(created.body.customFields, fields)
  for (const wrong of [{ priority: 'overnight' }, { priority: 'standard', size: 2 }, { priority: 'standard', tier: 'c' }, { priority: 'standard', lane: 'z' }]) {
    t.equal((await post(app, 'createOrder', bodyWith(wrong))).status, 400, JSON.stringify(wrong))
  }
  const built = buildOrderSchemas({ statuses: ['pending'], maxItems: 1, maxPageSize: 1, customFields: { order: Delivery } })
  for (const form of [built.Order.properties.customFields, built.CreateOrderBody.properties.customFields] as Array<{ properties: Record<string, object> }>) {
    t.strictSame(form.properties.priority, { type: 'string', enum: ['standard', 'express'] })
    t.match(form.properties, { size: { anyOf: [{ const: 1 }, { const: 'one' }] }, tier: { anyOf: [{ description: 'the first tier' }, {}] }, lane: { type: 'string', anyOf: [{}, {}] } },
      'literals of mixed types, with options of their own, or beside a type of the union\'s own stay a union')
  }
})

t.test('buildOrderSchemas with the same custom fields gives a host the schemas the plugin serves', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { customFields })
  const built = buildOrderSchemas({ statuses: ['pending', 'paid'], maxItems: 10, maxPageSize: 10, customFields })
  // A route of the host's own, serialized by the same Order schema as the plugin's routes.
  app.get('/latest', { schema: { response: { 200: { ...built.Order, $id: undefined } } } }, async () => (await app.orders.list({ limit: 1 })).items[0])
  const order = await createOrder(app, bodyWith({ address, insured: true }, { giftNote: 'hi' }) as never)
  const latest = await app.inject('/latest')
  t.same(latest.json(), order)
  t.match(built.CreateOrderBody.properties, { customFields: { additionalProperties: false } }, 'the request schema refuses unknown keys')
  t.throws(() => buildOrderSchemas({ statuses: ['pending'], maxItems: 1, maxPageSize: 1, customFields: { order: Type.String() as never } }),
    { code: 'ORDER_INVALID_OPTIONS' })
})
