// The ceiling: the same two routes hand-written on bare Fastify, with the same schemas and a Map (baseline-orders.ts);
// with the benchmark's custom fields when BENCH_CUSTOM_FIELDS is set (buildOrderSchemas gives the
// same schemas the plugin uses, and the route keeps what the body holds).
import Fastify from 'fastify'
import { buildOrderSchemas, defaultWorkflow, OrderErrorSchema, type CreateOrderInput, type ListOrdersQuery } from '../../lib/index.js'
import { baselineOrders } from './baseline-orders.js'
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

const orders = baselineOrders()

app.post('/order/createOrder', {
  schema: { body: CreateOrderBodySchema, response: { 201: { $ref: 'Order#' }, 400: { $ref: 'OrderError#' } } }
}, async (request, reply) => {
  const order = orders.create(request.body as CreateOrderInput)
  if (order === undefined) return reply.code(400).send({ statusCode: 400, code: 'ORDER_TOTAL_TOO_LARGE', error: 'Bad Request', message: 'total too large' })
  return reply.code(201).send(order)
})

app.post('/order/getOrderList', {
  schema: { body: ListOrdersBodySchema, response: { 200: OrderPageSchema, 400: { $ref: 'OrderError#' } } }
}, async (request) => orders.page((request.body ?? {}) as ListOrdersQuery))

await serve(app)
