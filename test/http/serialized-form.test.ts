// The response serializer's form of a schema: a change's actions written without a schema check per action, and written the same.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import fastJson from 'fast-json-stringify'
import { buildOrderSchemas, defaultWorkflow } from '../../lib/index.js'
import { serializedFormOf } from '../../lib/http/serialized-form.js'

const at = '2026-03-01T10:00:00.000Z'

t.test('an order with changes of every action type is written as it is, with the actions merged into one object form', async t => {
  const { Order } = buildOrderSchemas({ statuses: Object.keys(defaultWorkflow.transitions), maxItems: 100, maxPageSize: 100, changes: true })
  const form = serializedFormOf(Order)
  const actions = form.properties.changes.items.properties.actions.items as unknown as { oneOf?: unknown, properties: Record<string, unknown> }
  t.equal(actions.oneOf, undefined, 'no oneOf left to check each action against')
  t.same(Object.keys(actions.properties).sort(), ['amount', 'index', 'item', 'quantity', 'reference', 'type', 'unitPrice'])
  t.not(form, Order, 'a new schema')
  t.ok('oneOf' in (Order.properties.changes.items.properties.actions.items as object), 'the route\'s own schema (and OpenAPI) keep the oneOf')

  const everyAction = [
    { type: 'addItem', item: { sku: 'BOWL', name: 'Bowl', quantity: 1, unitPrice: 600 } },
    { type: 'setQuantity', index: 0, quantity: 0 },
    { type: 'setUnitPrice', index: 1, unitPrice: 1 },
    { type: 'cancelItem', index: 1, quantity: 1 },
    { type: 'returnItem', index: 2, quantity: 1 },
    { type: 'recordPayment', amount: 601, reference: 'pi_1' },
    { type: 'recordRefund', amount: 1, reference: 're_1' }
  ]
  const order = {
    id: 'ord_1',
    number: 1,
    customerId: 'cus_1',
    status: 'shipped',
    currency: 'EUR',
    items: [{ sku: 'MUG', quantity: 0, unitPrice: 1250 }, { sku: 'PLATE', quantity: 1, unitPrice: 1, cancelled: 1 }, { sku: 'BOWL', name: 'Bowl', quantity: 1, unitPrice: 600, returned: 1 }],
    total: 600,
    metadata: {},
    version: 2,
    statusHistory: [{ status: 'shipped', at }],
    createdAt: at,
    updatedAt: at,
    paid: 600,
    balance: 0,
    payments: [{ kind: 'payment', amount: 601, reference: 'pi_1', at, by: 'agent_7' }, { kind: 'refund', amount: 1, reference: 're_1', at }],
    changes: [{ version: 2, at, by: 'agent_7', reason: 'a mix', actions: everyAction, totalBefore: 2500, totalAfter: 600 }]
  }
  const written = fastJson(form as never)(order)
  t.same(JSON.parse(written), order, 'every action with its own properties, nothing added')
  t.equal(written, fastJson(Order as never)(order), 'the same text the oneOf form writes')
  t.throws(() => fastJson(form as never)({ ...order, changes: [{ ...order.changes[0], actions: [{ index: 0 }] }] }), 'an action without a type is not written')
})

t.test('a oneOf that is not one of objects told apart by a discriminator, or whose branches give a property two types, stays as it is', async t => {
  const shared = Type.Object({ kind: Type.Literal('a'), value: Type.String() })
  const cases = {
    'no discriminator': Type.Union([shared, Type.Object({ kind: Type.Literal('b'), value: Type.String() })]),
    'a discriminator that names no property': { oneOf: [shared], discriminator: {} },
    'a branch that is not an object': { oneOf: [shared, Type.String()], discriminator: { propertyName: 'kind' } },
    'a property of two types': { oneOf: [shared, Type.Object({ kind: Type.Literal('b'), value: Type.Integer() })], discriminator: { propertyName: 'kind' } }
  }
  for (const [what, schema] of Object.entries(cases)) {
    const wrapped = Type.Object({ list: Type.Array(schema as never) })
    t.equal(serializedFormOf(wrapped), wrapped, what)
  }
  t.equal(serializedFormOf(true), true, 'a boolean schema')
})
