// Hostile input: whatever body and Content-Type a client sends, the answer is a well-formed 2xx or 4xx.
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { Ajv } from 'ajv'
import ajvFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import {
  CreateOrderBodySchema, ListOrdersBodySchema, OrderPageSchema, OrderSchema, UpdateOrderStatusBodySchema
} from '../../lib/index.js'
import { buildApp, createOrder, orderBody } from '../helper.js'
import { STATUSES, createBodyArb, statusArb } from '../orders/order-arbitraries.js'

const ajv = new Ajv({ strict: false })
ajvFormats.default(ajv, ['date-time'])
ajv.addSchema(OrderSchema)
const responseValidators = {
  createOrder: ajv.compile(OrderSchema),
  updateOrderStatus: ajv.compile(OrderSchema),
  getOrderList: ajv.compile(OrderPageSchema)
}
const bodyValidators = {
  createOrder: ajv.compile(CreateOrderBodySchema),
  updateOrderStatus: ajv.compile(UpdateOrderStatusBodySchema),
  getOrderList: ajv.compile(ListOrdersBodySchema)
}
type Operation = keyof typeof responseValidators

/** Values of every JSON type, and the edge values of each. */
const hostileValueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, '', '2', 'true', 'null', ' ', '\u0000', 'x'.repeat(600)),
  fc.constantFrom(0, -0, -1, 0.5, 1e12 + 1, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 1e21, 1e308, -1e308, 5e-324),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 20 }),
  fc.constantFrom([], {}, [1], ['paid'], { '': '' }, [null]),
  fc.jsonValue({ maxDepth: 3 })
)

const extraKeyArb = fc.constantFrom(
  '__proto__', 'constructor', 'prototype', 'id', 'status', 'total', 'version', 'createdAt', 'statusHistory', 'toString', ''
)

function withOwn (target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  // defineProperty, so that "__proto__" becomes a real key of the JSON text.
  return Object.defineProperty({ ...target }, key, { value, enumerable: true, writable: true, configurable: true })
}

/** A valid body, or one with a field replaced, removed or a property added, at the top or one level down. */
function nearValidArb (validArb: fc.Arbitrary<Record<string, unknown>>, nested: string[]): fc.Arbitrary<unknown> {
  return fc.tuple(validArb, fc.constantFrom('keep', 'replace', 'remove', 'add'), fc.nat(), extraKeyArb, hostileValueArb)
    .map(([body, mutation, pick, extraKey, value]) => {
      const paths = [...Object.keys(body).map(key => [key]), ...nested.map(path => path.split('.'))]
      const path = paths[pick % paths.length]!
      const change = (target: Record<string, unknown>, [key, ...rest]: string[]): Record<string, unknown> => {
        if (rest.length > 0) {
          const inner = target[key!]
          const child = Array.isArray(inner) ? { ...inner } as Record<string, unknown> : inner as Record<string, unknown>
          const changed = change(typeof child === 'object' && child !== null ? child : {}, rest)
          return withOwn(target, key!, Array.isArray(inner) ? Object.assign([...inner], changed) : changed)
        }
        if (mutation === 'keep') return target
        if (mutation === 'replace') return withOwn(target, key!, value)
        if (mutation === 'remove') {
          const { [key!]: _removed, ...others } = target
          return others
        }
        return withOwn(target, extraKey, value)
      }
      return change(body, path)
    })
}

const deepNestingArb = fc.integer({ min: 1, max: 5000 }).chain(depth => fc.constantFrom(
  '['.repeat(depth) + ']'.repeat(depth),
  '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
  `{"filter":${'['.repeat(depth)}${']'.repeat(depth)}}`,
  `{"customerId":"c","currency":"EUR","items":[{"sku":"a","quantity":1,"unitPrice":1}],"metadata":${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}}`
))

/** The raw text of a request body: JSON of a hostile or near-valid value, broken JSON, or nothing. */
function payloadArb (nearValid: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: nearValid.map(body => JSON.stringify(body)) },
    { weight: 2, arbitrary: fc.jsonValue().map(value => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }).map(value => JSON.stringify(value) ?? '') },
    { weight: 1, arbitrary: deepNestingArb },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', 'null', '{', '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}', '\ufeff{}') }
  )
}

/** Content-Type spellings: JSON in any case, with spaces, tabs and parameters, other types, or none. */
const contentTypeArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 3, arbitrary: fc.constant('application/json') },
  {
    weight: 4,
    arbitrary: fc.tuple(
      fc.constantFrom('', ' ', '\t'),
      fc.mixedCase(fc.constant('application/json')),
      fc.constantFrom('', ' ', '\t', ';', '; charset=utf-8', ';charset=UTF-8', ' ; charset="utf-8"', '; charset=iso-8859-1', '; boundary=x', ', text/plain')
    ).map(parts => parts.join(''))
  },
  {
    weight: 2,
    arbitrary: fc.mixedCase(fc.constantFrom(
      'text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'application/problem+json',
      'application/jsonx', 'application/json-patch+json', 'multipart/form-data; boundary=x', 'text/json', 'json'
    ))
  },
  { weight: 1, arbitrary: fc.constant(undefined) }
)

function assertWellFormed (operation: Operation, payload: string, status: number, body: string): void {
  assert.ok(status < 500, `${status} ${body}`)
  const answer = JSON.parse(body)
  if (status >= 400) {
    assert.deepEqual(Object.keys(answer).sort(), ['code', 'error', 'message', 'statusCode'], body)
    assert.equal(answer.statusCode, status)
    for (const field of ['code', 'error', 'message']) assert.equal(typeof answer[field], 'string')
    return
  }
  assert.equal(status, operation === 'createOrder' ? 201 : 200)
  assert.ok(responseValidators[operation](answer), `${operation} answered outside its schema: ${body}`)
  // A success means the body passed validation: no spelling of the Content-Type may skip it.
  // Fastify's JSON parser, like RFC 8259 allows, ignores a leading byte order mark.
  const json = payload.replace(/^\ufeff/, '')
  const sent = json.trim() === '' && operation === 'getOrderList' ? {} : JSON.parse(json)
  assert.ok(bodyValidators[operation](sent), `${operation} accepted an invalid body: ${payload}`)
}

async function fuzz (app: FastifyInstance, operation: Operation, nearValid: fc.Arbitrary<unknown>, seed: number): Promise<void> {
  await fc.assert(fc.asyncProperty(payloadArb(nearValid), contentTypeArb, async (payload, contentType) => {
    const response = await app.inject({
      method: 'POST',
      url: `/order/${operation}`,
      payload,
      headers: contentType === undefined ? {} : { 'content-type': contentType }
    })
    assertWellFormed(operation, payload, response.statusCode, response.body)
  }), { seed, numRuns: 300 })
}

t.test('createOrder answers any body with a well-formed 201 or 4xx', async t => {
  const app = await buildApp(t)
  await fuzz(app, 'createOrder', nearValidArb(
    createBodyArb as fc.Arbitrary<Record<string, unknown>>,
    ['items.0', 'items.0.quantity', 'items.0.unitPrice', 'items.0.sku', 'items.0.name', 'metadata.channel', 'metadata.__proto__']
  ), 1)
})

t.test('updateOrderStatus answers any body with a well-formed 200 or 4xx', async t => {
  const app = await buildApp(t)
  const orders = [await createOrder(app), await createOrder(app, orderBody({ customerId: 'cus_7' }))]
  const validArb = fc.record({
    id: fc.constantFrom(...orders.map(order => order.id)),
    status: statusArb,
    expectedVersion: fc.integer({ min: 1, max: 3 }),
    reason: fc.string({ maxLength: 20 })
  }, { requiredKeys: ['id', 'status'], noNullPrototype: true })
  await fuzz(app, 'updateOrderStatus', nearValidArb(validArb, []), 2)
})

t.test('getOrderList answers any body with a well-formed 200 or 4xx', async t => {
  const app = await buildApp(t)
  const orders = [await createOrder(app), await createOrder(app), await createOrder(app, orderBody({ customerId: 'cus_7' }))]
  const validArb = fc.record({
    limit: fc.integer({ min: 1, max: 100 }),
    order: fc.constantFrom('asc', 'desc'),
    cursor: fc.oneof(fc.base64String({ minLength: 1, maxLength: 80 }), fc.string({ minLength: 1 })),
    filter: fc.record({
      status: fc.oneof(statusArb, fc.uniqueArray(fc.constantFrom(...STATUSES), { minLength: 1 })),
      customerId: fc.constantFrom('cus_42', 'cus_7'),
      ids: fc.array(fc.constantFrom(...orders.map(order => order.id)), { minLength: 1, maxLength: 3 }),
      createdFrom: fc.date({ noInvalidDate: true }).map(date => date.toISOString()),
      createdTo: fc.date({ noInvalidDate: true }).map(date => date.toISOString())
    }, { requiredKeys: [], noNullPrototype: true })
  }, { requiredKeys: [], noNullPrototype: true })
  await fuzz(app, 'getOrderList', nearValidArb(validArb, ['filter.status', 'filter.ids', 'filter.createdFrom', 'filter.__proto__', 'filter.ids.0']), 3)
})

t.test('getOrderList answers a JSON null body with 400, like any body that is not an object', async t => {
  const app = await buildApp(t)
  for (const payload of ['null', '[]', '"{}"', '0']) {
    const response = await app.inject({ method: 'POST', url: '/order/getOrderList', payload, headers: { 'content-type': 'application/json' } })
    t.equal(response.statusCode, 400, payload)
    t.equal(response.json().code, 'FST_ERR_VALIDATION', payload)
  }
})
