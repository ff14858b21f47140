// The ceiling: the same two routes hand-written on bare Fastify, with the same schemas and a Map;
// with the benchmark's custom fields when BENCH_CUSTOM_FIELDS is set (buildOrderSchemas gives the
// same schemas the plugin uses, and the route keeps what the body holds).
import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import {
  buildOrderSchemas, defaultWorkflow, OrderErrorSchema, type CreateOrderInput, type ListOrdersQuery, type Order
} from '../../lib/index.js'
import { customFields } from '../custom-fields.js'
import { serve } from './serve.js'

const {
  CreateOrderBody: CreateOrderBodySchema, ListOrdersBody: ListOrdersBodySchema, Order: OrderSchema, OrderPage: OrderPageSchema
} = buildOrderSchemas({
  statuses: Object.keys(defaultWorkflow.transitions),
  maxItems: 100,
  maxPageSize: 100,
  customFields: process.env.BENCH_CUSTOM_FIELDS === undefined ? undefined : customFields
})

// As strict as the plugin: no coercion, unknown properties rejected rather than dropped, no defaults.
const app = Fastify({ ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false } } })
app.addSchema(OrderSchema)
app.addSchema(OrderErrorSchema)

const orders = new Map<string, Order>()
// Orders of each customer in creation order, so a newest-first page is a walk from the end.
const byCustomer = new Map<string, Order[]>()
let lastNumber = 0

app.post('/order/createOrder', {
  schema: { body: CreateOrderBodySchema, response: { 201: { $ref: 'Order#' }, 400: { $ref: 'OrderError#' } } }
}, async (request, reply) => {
  const { customerId, currency, items, metadata = {}, customFields: fields } = request.body as CreateOrderInput & { customFields?: object }
  let total = 0
  for (const { quantity, unitPrice } of items) total += quantity * unitPrice
  if (total > Number.MAX_SAFE_INTEGER) return reply.code(400).send({ statusCode: 400, code: 'ORDER_TOTAL_TOO_LARGE', error: 'Bad Request', message: 'total too large' })
  const createdAt = new Date().toISOString()
  const order: Order = {
    id: randomUUID(),
    number: ++lastNumber,
    customerId,
    status: 'pending',
    currency,
    items,
    total,
    metadata,
    version: 1,
    statusHistory: [{ status: 'pending', at: createdAt }],
    createdAt,
    updatedAt: createdAt
  }
  if (fields !== undefined) Object.assign(order, { customFields: fields })
  orders.set(order.id, order)
  let customerOrders = byCustomer.get(customerId)
  if (customerOrders === undefined) byCustomer.set(customerId, customerOrders = [])
  customerOrders.push(order)
  return reply.code(201).send(order)
})

// Only what the benchmark asks for: the newest page of one customer's orders.
app.post('/order/getOrderList', {
  schema: { body: ListOrdersBodySchema, response: { 200: OrderPageSchema, 400: { $ref: 'OrderError#' } } }
}, async (request) => {
  const { limit = 20, filter } = (request.body ?? {}) as ListOrdersQuery
  const customerOrders = byCustomer.get(filter?.customerId ?? '') ?? []
  const items: Order[] = []
  for (let index = customerOrders.length - 1; index >= 0 && items.length < limit; index--) items.push(customerOrders[index]!)
  const last = items[items.length - 1]
  const nextCursor = customerOrders.length > limit && last !== undefined
    ? Buffer.from(JSON.stringify([last.createdAt, last.id])).toString('base64url')
    : null
  return { items, nextCursor }
})

await serve(app)
