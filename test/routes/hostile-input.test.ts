// Hostile input: whatever a client sends, the answer is a clean 4xx or a correct result, never a 5xx.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, createOrder, orderBody } from '../helper.js'

const item = { sku: 'A-1', quantity: 1, unitPrice: 100 }

/** Sends raw text, as a hostile client can, rather than a value the test serializes. */
async function send (app: FastifyInstance, operation: string, payload: string | undefined, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const response = await app.inject({ method: 'POST', url: `/order/${operation}`, payload, headers })
  return { status: response.statusCode, body: response.json() }
}

/** Raw createOrder JSON text with `extra` spliced in after the valid fields. */
function createText (extra = '', items = JSON.stringify([item])): string {
  return `{"customerId":"cus_42","currency":"EUR","items":${items}${extra}}`
}

async function storedCount (app: FastifyInstance): Promise<number> {
  return (await app.orders.list({ limit: 100 })).items.length
}

t.test('prototype-poisoning bodies are rejected with 400 and pollute nothing', async t => {
  const app = await buildApp(t)
  const bodies = {
    '__proto__ at the top': createText(',"__proto__":{"polluted":true}'),
    'constructor.prototype at the top': createText(',"constructor":{"prototype":{"polluted":true}}'),
    '__proto__ in an item': createText('', '[{"sku":"A-1","quantity":1,"unitPrice":1,"__proto__":{"polluted":true}}]'),
    '__proto__ as a metadata key': createText(',"metadata":{"__proto__":"x"}'),
    'escaped __proto__': createText(',"\\u005f_proto__":{"polluted":true}'),
    '__proto__ in a list filter': '{"filter":{"__proto__":{"polluted":true}}}',
    'constructor.prototype in an update': '{"id":"x","status":"paid","constructor":{"prototype":{"polluted":true}}}'
  }
  for (const [name, text] of Object.entries(bodies)) {
    const operation = name.includes('filter') ? 'getOrderList' : name.includes('update') ? 'updateOrderStatus' : 'createOrder'
    const { status } = await send(app, operation, text)
    t.equal(status, 400, name)
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is untouched')
  t.equal(await storedCount(app), 0)
})

t.test('metadata keys named like Object.prototype members are stored as plain data', async t => {
  const app = await buildApp(t)
  const metadata = { constructor: 'a', prototype: 'b', hasOwnProperty: 'c', toString: 'd', valueOf: 'e' }
  const { status, body } = await send(app, 'createOrder', createText(`,"metadata":${JSON.stringify(metadata)}`))
  t.equal(status, 201)
  t.same(body.metadata, metadata)
  const [stored] = (await app.orders.list()).items
  t.same(stored!.metadata, metadata)
  t.equal(typeof ({} as Record<string, unknown>).hasOwnProperty, 'function', 'Object.prototype is untouched')
})

t.test('app.orders keeps an own "__proto__" metadata key as data', async t => {
  const app = await buildApp(t)
  const metadata = JSON.parse('{"__proto__":"x","channel":"web"}')
  const order = await app.orders.create(orderBody({ metadata }))
  t.same(Object.entries(order.metadata), [['__proto__', 'x'], ['channel', 'web']])
  t.equal(Object.getPrototypeOf(order.metadata), Object.prototype)
  const listed = await app.inject({ method: 'POST', url: '/order/getOrderList', payload: {} })
  t.equal(listed.statusCode, 200)
  t.match(listed.body, '"__proto__":"x"', 'served as a key like any other')
  await t.rejects(app.orders.create(orderBody({ metadata: JSON.parse('{"__proto__":{"polluted":true}}') })), { code: 'FST_ERR_VALIDATION' })
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('deeply nested JSON is a 400, not a crash', async t => {
  const app = await buildApp(t)
  const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)
  const deepObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
  const cases: Array<[string, string, string]> = [
    ['10k nested arrays in metadata', 'createOrder', createText(`,"metadata":{"a":${deep(10_000)}}`)],
    ['100k nested arrays as items', 'createOrder', createText('', deep(100_000))],
    ['100k nested objects as metadata', 'createOrder', createText(`,"metadata":${deepObject(100_000)}`)],
    ['100k nested objects next to a constructor key', 'createOrder', createText(`,"constructor":1,"metadata":${deepObject(100_000)}`)],
    ['100k nested arrays in a list filter', 'getOrderList', `{"filter":{"ids":${deep(100_000)}}}`],
    ['100k nested arrays as a reason', 'updateOrderStatus', `{"id":"x","status":"paid","reason":${deep(100_000)}}`]
  ]
  for (const [name, operation, text] of cases) {
    const { status } = await send(app, operation, text)
    t.equal(status, 400, name)
  }
  t.equal(await storedCount(app), 0)
})

t.test('numbers out of range, unsafe or fractional are 400', async t => {
  const app = await buildApp(t)
  const items = (quantity: string, unitPrice: string) => `[{"sku":"A-1","quantity":${quantity},"unitPrice":${unitPrice}}]`
  const cases = {
    'quantity 1e400': items('1e400', '1'),
    'unitPrice 1e400': items('1', '1e400'),
    'unitPrice -1e400': items('1', '-1e400'),
    'unitPrice 2^53 + 1': items('1', '9007199254740993'),
    'quantity -0': items('-0', '1'),
    'quantity 1.5': items('1.5', '1'),
    'unitPrice 0.1': items('1', '0.1'),
    'unitPrice -1': items('1', '-1'),
    'quantity 1000001': items('1000001', '1')
  }
  for (const [name, text] of Object.entries(cases)) {
    const { status, body } = await send(app, 'createOrder', createText('', text))
    t.equal(status, 400, name)
    t.equal(body.code, 'FST_ERR_VALIDATION', name)
  }
  for (const text of ['{"limit":1e400}', '{"limit":1.5}', '{"limit":-0}', '{"limit":101}']) {
    t.equal((await send(app, 'getOrderList', text)).status, 400, text)
  }
  for (const version of ['1e400', '1.5', '-0', '2147483648']) {
    const { status } = await send(app, 'updateOrderStatus', `{"id":"x","status":"paid","expectedVersion":${version}}`)
    t.equal(status, 400, `expectedVersion ${version}`)
  }
  t.equal(await storedCount(app), 0)
})

t.test('a unitPrice of -0 is a price of zero', async t => {
  const app = await buildApp(t)
  const { status, body } = await send(app, 'createOrder', createText('', '[{"sku":"A-1","quantity":3,"unitPrice":-0}]'))
  t.equal(status, 201)
  t.equal(body.total, 0)
  t.equal(body.items[0].unitPrice, 0)
})

t.test('a total above Number.MAX_SAFE_INTEGER is 400 ORDER_TOTAL_TOO_LARGE and stores nothing', async t => {
  const app = await buildApp(t)
  const biggest = { sku: 'A-1', quantity: 1_000_000, unitPrice: 1e12 }
  for (const items of [[biggest], Array.from({ length: 10 }, () => ({ ...biggest, quantity: 1000 }))]) {
    const { status, body } = await send(app, 'createOrder', createText('', JSON.stringify(items)))
    t.equal(status, 400)
    t.equal(body.code, 'ORDER_TOTAL_TOO_LARGE')
  }
  await t.rejects(app.orders.create(orderBody({ items: [biggest] })), { code: 'ORDER_TOTAL_TOO_LARGE', statusCode: 400 })
  t.equal(await storedCount(app), 0)

  const largest = Array.from({ length: 9 }, () => ({ ...biggest, quantity: 1000 }))
  const { status, body } = await send(app, 'createOrder', createText('', JSON.stringify(largest)))
  t.equal(status, 201, 'a large total below the limit is exact')
  t.equal(body.total, 9e15)
})

for (const [name, server] of [
  ['by default', {}],
  ['when the host asks Ajv to coerce, strip and fill in', { ajv: { customOptions: { coerceTypes: true, removeAdditional: true, useDefaults: true } } }]
] as const) {
  t.test(`wrong types and unknown properties are 400 ${name}`, async t => {
    const app = await buildApp(t, {}, server)
    const order = await createOrder(app)
    const creates: Record<string, unknown> = {
      'a string for a quantity': orderBody({ items: [{ ...item, quantity: '2' as never }] }),
      'a string for a unitPrice': orderBody({ items: [{ ...item, unitPrice: '100' as never }] }),
      'true for a quantity': orderBody({ items: [{ ...item, quantity: true as never }] }),
      'null for a customerId': orderBody({ customerId: null as never }),
      'a number for a customerId': orderBody({ customerId: 42 as never }),
      'null for a sku': orderBody({ items: [{ ...item, sku: null as never }] }),
      'a number in metadata': orderBody({ metadata: { channel: 1 as never } }),
      'an item instead of a list': orderBody({ items: item as never }),
      'an unknown property': { ...orderBody(), coupon: 'FREE' },
      'an unknown item property': orderBody({ items: [{ ...item, discount: 100 } as never] }),
      ...Object.fromEntries([
        ['id', 'mine'], ['status', 'paid'], ['total', 0], ['version', 9], ['createdAt', '2020-01-01T00:00:00.000Z'],
        ['updatedAt', '2020-01-01T00:00:00.000Z'], ['statusHistory', []]
      ].map(([field, value]) => [`the server-owned field ${field}`, { ...orderBody(), [field as string]: value }]))
    }
    for (const [what, payload] of Object.entries(creates)) {
      const response = await app.inject({ method: 'POST', url: '/order/createOrder', payload: payload as object })
      t.equal(response.statusCode, 400, what)
      t.equal(response.json().code, 'FST_ERR_VALIDATION', what)
    }
    const lists: Record<string, unknown> = {
      'a string for a limit': { limit: '5' },
      'null for an order': { order: null },
      'an unknown property': { sort: 'total' },
      'an unknown filter': { filter: { total: 5 } },
      'a number for a status filter': { filter: { status: 1 } }
    }
    for (const [what, payload] of Object.entries(lists)) {
      const response = await app.inject({ method: 'POST', url: '/order/getOrderList', payload: payload as object })
      t.equal(response.statusCode, 400, what)
    }
    const updates: Record<string, unknown> = {
      'a string for expectedVersion': { id: order.id, status: 'paid', expectedVersion: '1' },
      'true for expectedVersion': { id: order.id, status: 'paid', expectedVersion: true },
      'null for a reason': { id: order.id, status: 'paid', reason: null },
      'a server-owned field': { id: order.id, status: 'paid', version: 7 },
      'an unknown status': { id: order.id, status: 'lost' }
    }
    for (const [what, payload] of Object.entries(updates)) {
      const response = await app.inject({ method: 'POST', url: '/order/updateOrderStatus', payload: payload as object })
      t.equal(response.statusCode, 400, what)
    }
    t.same((await app.orders.list()).items, [order], 'nothing stored, nothing changed')
  })
}

t.test('app.orders validates as strictly as the routes', async t => {
  const app = await buildApp(t, {}, { ajv: { customOptions: { coerceTypes: true, removeAdditional: true } } })
  await t.rejects(app.orders.create(orderBody({ items: [{ ...item, quantity: '2' as never }] })), { code: 'FST_ERR_VALIDATION', statusCode: 400 })
  await t.rejects(app.orders.create({ ...orderBody(), status: 'paid' } as never), { code: 'FST_ERR_VALIDATION' })
  await t.rejects(app.orders.list({ limit: '5' as never }), { code: 'FST_ERR_VALIDATION' })
  await t.rejects(app.orders.updateStatus({ id: 'x', status: 'paid', expectedVersion: '1' as never }), { code: 'FST_ERR_VALIDATION' })
  t.equal(await storedCount(app), 0)
})

t.test('a body above the limit is 413, by default at 1 MiB and with the bodyLimit option', async t => {
  const app = await buildApp(t)
  const padding = (bytes: number) => createText(`,"metadata":{"pad":"${'x'.repeat(bytes)}"}`)
  const tooLarge = await send(app, 'createOrder', padding(1024 * 1024))
  t.equal(tooLarge.status, 413)
  t.equal(tooLarge.body.code, 'FST_ERR_CTP_BODY_TOO_LARGE')
  t.equal((await send(app, 'getOrderList', `{"cursor":"${'x'.repeat(1024 * 1024)}"}`)).status, 413)

  const small = await buildApp(t, { bodyLimit: 300 })
  t.equal((await send(small, 'createOrder', padding(400))).status, 413)
  t.equal((await send(small, 'updateOrderStatus', `{"id":"x","status":"paid","reason":"${'x'.repeat(400)}"}`)).status, 413)
  t.equal((await send(small, 'createOrder', createText())).status, 201, 'a body within the limit passes')
  t.equal(await storedCount(app), 0)
})

t.test('no Content-Type spelling lets an invalid body skip validation', async t => {
  const app = await buildApp(t)
  const valid = createText()
  const invalid = createText('', '[{"sku":"A-1","quantity":"2","unitPrice":1}]')
  const jsonSpellings = [
    'application/json', 'APPLICATION/JSON', 'Application/Json; charset=utf-8', 'application/json ; charset=UTF-8',
    'application/json\t', ' application/json', 'application/json;', 'application/json; junk', 'application/json;;;x=1'
  ]
  for (const contentType of jsonSpellings) {
    t.equal((await send(app, 'createOrder', invalid, { 'content-type': contentType })).status, 400, `invalid body as ${JSON.stringify(contentType)}`)
    t.equal((await send(app, 'createOrder', valid, { 'content-type': contentType })).status, 201, `valid body as ${JSON.stringify(contentType)}`)
  }
  const otherSpellings = [
    'text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x',
    'application/jsonx', 'application/vnd.api+json', 'application/json, text/plain', '*/*', ''
  ]
  for (const contentType of otherSpellings) {
    for (const text of [invalid, valid]) {
      const { status } = await send(app, 'createOrder', text, { 'content-type': contentType })
      t.ok(status >= 400 && status < 500, `${JSON.stringify(contentType)} is refused with a 4xx (${status})`)
    }
  }
  const noContentType = await send(app, 'createOrder', invalid, {})
  t.ok(noContentType.status >= 400 && noContentType.status < 500, `a body without a Content-Type is a 4xx (${noContentType.status})`)
  t.equal(await storedCount(app), jsonSpellings.length, 'only the valid JSON bodies were stored')
})

t.test('createOrder without a body is 400', async t => {
  const app = await buildApp(t)
  t.equal((await send(app, 'createOrder', undefined, {})).status, 400)
  t.equal((await send(app, 'createOrder', '', { 'content-type': 'application/json' })).status, 400)
  for (const text of ['null', '[]', '"order"', '42', '{', '{"customerId":']) {
    t.equal((await send(app, 'createOrder', text)).status, 400, text)
  }
  t.equal(await storedCount(app), 0)
})

t.test('forged cursors are 400 ORDER_INVALID_CURSOR or a validation error', async t => {
  const app = await buildApp(t)
  for (let i = 0; i < 3; i++) await createOrder(app)
  const issued = (await send(app, 'getOrderList', '{"limit":1,"order":"asc","filter":{"status":"pending"}}')).body.nextCursor as string
  const [, createdAt, check, id] = /^1\.(.+Z)\.(\w+)\.(.+)$/s.exec(issued) as unknown as [string, string, string, string]
  const forge = (...fields: string[]) => fields.join('.')
  const changeLast = (text: string) => text.replace(/.$/, last => last === '0' ? '1' : '0')

  const invalid: Record<string, [string, object?]> = {
    'random text': ['not a cursor at all, really'],
    'random base64url': [Buffer.from(issued).toString('base64url')],
    'random characters': ['A'.repeat(40)],
    truncated: [issued.slice(0, -3)],
    extended: [`${issued}0`],
    'with a newline': [`${issued}\n`],
    'issued for another filter': [issued, { filter: { status: 'paid' } }],
    'issued for another order': [issued, { order: 'desc', filter: { status: 'pending' } }],
    'issued for no filter': [issued, { order: 'asc' }],
    'another version': [forge('2', createdAt, check, id)],
    'another time': [forge('1', new Date(Date.parse(createdAt) + 1).toISOString(), check, id)],
    'the time spelled with six year digits': [forge('1', `+00${createdAt}`, check, id)],
    'not a date': [forge('1', '2026-13-01T00:00:00.000Z', check, id)],
    'another id': [forge('1', createdAt, check, changeLast(id))],
    'another check': [forge('1', createdAt, changeLast(check), id)],
    'a time out of range': [forge('1', '+275760-09-13T00:00:00.001Z', check, id)],
    'a time in seconds': [forge('1', String(Math.floor(Date.parse(createdAt) / 1000)), check, id)],
    'an empty id': [forge('1', createdAt, check, '')],
    'a 129-character id': [forge('1', createdAt, check, 'x'.repeat(129))],
    'too few fields': [forge('1', createdAt, check)],
    '1024 characters': ['A'.repeat(1024)]
  }
  for (const [name, [cursor, query = { order: 'asc', filter: { status: 'pending' } }]] of Object.entries(invalid)) {
    const { status, body } = await send(app, 'getOrderList', JSON.stringify({ ...query, cursor }))
    t.equal(status, 400, name)
    t.equal(body.code, 'ORDER_INVALID_CURSOR', name)
  }
  for (const cursor of ['', 'A'.repeat(2000)]) {
    const { status, body } = await send(app, 'getOrderList', JSON.stringify({ cursor }))
    t.equal(status, 400, `${cursor.length} characters`)
    t.equal(body.code, 'FST_ERR_VALIDATION')
  }
  const followed = await send(app, 'getOrderList', JSON.stringify({ order: 'asc', filter: { status: 'pending' }, cursor: issued }))
  t.equal(followed.status, 200, 'the issued cursor still works with its own query')
  t.equal(followed.body.items.length, 2)
})

t.test('extreme filter dates are a clean answer, never a 5xx', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  const dates = [
    '2016-12-31T23:59:60Z', '2016-12-31T23:59:60.999Z', '2016-06-30T23:59:60-00:00', '2015-06-30T23:59:60Z',
    '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59-23:59', '9999-12-31T23:59:59+23:59',
    '0000-01-01T00:00:00Z', '0000-01-01T00:00:00+23:59', '0000-01-01T00:00:00-23:59',
    '2020-02-30T00:00:00Z', '2020-01-01T24:00:00Z', '2020-01-01T00:00:00+24:00', '2020-01-01T00:00:00',
    '2020-01-01t00:00:00z', '2020-01-01T00:00:00.123456789123456789Z', '+275760-09-13T00:00:00Z', 'yesterday'
  ]
  for (const date of dates) {
    for (const field of ['createdFrom', 'createdTo']) {
      const { status, body } = await send(app, 'getOrderList', JSON.stringify({ filter: { [field]: date } }))
      t.ok(status === 200 || (status === 400 && body.code === 'FST_ERR_VALIDATION'), `${field} ${date}: ${status}`)
    }
  }
  const everything = await send(app, 'getOrderList', JSON.stringify({
    filter: { createdFrom: '0000-01-01T00:00:00+23:59', createdTo: '9999-12-31T23:59:59-23:59' }
  }))
  t.same(everything.body.items.map((listed: { id: string }) => listed.id), [order.id], 'the widest range holds every order')
  const nothing = await send(app, 'getOrderList', JSON.stringify({ filter: { createdFrom: '9999-12-31T23:59:59-23:59' } }))
  t.same(nothing.body, { items: [], nextCursor: null })
})

t.test('getOrderList reads a missing body as {} but answers a body that is not an object with 400', async t => {
  const app = await buildApp(t)
  await createOrder(app)
  t.equal((await send(app, 'getOrderList', undefined, {})).status, 200, 'no body, no Content-Type')
  t.equal((await send(app, 'getOrderList', '')).status, 200, 'an empty JSON body')
  for (const text of ['null', '[]', '"first page"', '0', 'false']) {
    const { status, body } = await send(app, 'getOrderList', text)
    t.equal(status, 400, text)
    t.equal(body.code, 'FST_ERR_VALIDATION', text)
  }
})
