// The same two routes hand-written on bare Fastify with SQL, as a user who keeps orders in PostgreSQL would.
import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import {
  CreateOrderBodySchema, ListOrdersBodySchema, OrderErrorSchema, OrderPageSchema, OrderSchema,
  type CreateOrderInput, type ListOrdersQuery, type Order
} from '../../lib/index.js'
import { openClient } from '../storages.js'
import { serve } from './serve.js'

// BENCH_STORAGE: postgres (a pg.Pool at DATABASE_URL) or pglite. BENCH_OUTBOX=1: each create also
// writes a Debezium-style outbox row in the same statement, the durable event a user writes by hand.
const storage = process.env.BENCH_STORAGE === 'pglite' ? 'pglite' : 'postgres'
const outbox = process.env.BENCH_OUTBOX === '1'
const table = outbox ? 'fastify_order_bench_sql_orders' : 'fastify_order_bench_sql_plain_orders'
const { client, close } = await openClient(storage, process.env.BENCH_APPLICATION_NAME)
const dropTables = `DROP TABLE IF EXISTS ${table}${outbox ? ', fastify_order_bench_sql_outbox' : ''}`

await client.query(dropTables)
await client.query(`CREATE TABLE ${table} (id text PRIMARY KEY, customer_id text NOT NULL, created_at timestamptz NOT NULL, doc jsonb NOT NULL)`)
await client.query(`CREATE INDEX ${table}_customer_idx ON ${table} (customer_id, created_at, id)`)
if (outbox) {
  await client.query(`CREATE TABLE fastify_order_bench_sql_outbox (
    id uuid PRIMARY KEY, aggregatetype text NOT NULL, aggregateid text NOT NULL, type text NOT NULL, payload jsonb NOT NULL)`)
}
const insertOrder = `INSERT INTO ${table} (id, customer_id, created_at, doc) VALUES ($1, $2, $3, $4)`
// One statement, so the order and its event commit together without a transaction held across round trips.
const insertOrderAndEvent = `WITH inserted AS (${insertOrder} RETURNING id, doc)
  INSERT INTO fastify_order_bench_sql_outbox (id, aggregatetype, aggregateid, type, payload)
  SELECT $5, 'order', id, 'created', doc FROM inserted`
const selectPage = `SELECT doc FROM ${table} WHERE customer_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`

// As strict as the plugin: no coercion, unknown properties rejected rather than dropped, no defaults.
const app = Fastify({ ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false } } })
app.addSchema(OrderSchema)
app.addSchema(OrderErrorSchema)
app.addHook('onClose', async () => {
  await client.query(dropTables)
  await close()
})

app.post('/order/createOrder', {
  schema: { body: CreateOrderBodySchema, response: { 201: { $ref: 'Order#' }, 400: { $ref: 'OrderError#' } } }
}, async (request, reply) => {
  const { customerId, currency, items, metadata = {} } = request.body as CreateOrderInput
  let total = 0
  for (const { quantity, unitPrice } of items) total += quantity * unitPrice
  if (total > Number.MAX_SAFE_INTEGER) return reply.code(400).send({ statusCode: 400, code: 'ORDER_TOTAL_TOO_LARGE', error: 'Bad Request', message: 'total too large' })
  const createdAt = new Date().toISOString()
  const order: Order = {
    id: randomUUID(),
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
  const params = [order.id, customerId, createdAt, JSON.stringify(order)]
  if (outbox) await client.query(insertOrderAndEvent, [...params, randomUUID()])
  else await client.query(insertOrder, params)
  return reply.code(201).send(order)
})

// Only what the benchmark asks for: the newest page of one customer's orders, by keyset.
app.post('/order/getOrderList', {
  schema: { body: ListOrdersBodySchema, response: { 200: OrderPageSchema, 400: { $ref: 'OrderError#' } } }
}, async (request) => {
  const { limit = 20, filter } = (request.body ?? {}) as ListOrdersQuery
  const { rows } = await client.query(selectPage, [filter?.customerId ?? '', limit + 1])
  const items: Order[] = rows.slice(0, limit).map(row => row.doc)
  const last = items[items.length - 1]
  const nextCursor = rows.length > limit && last !== undefined
    ? Buffer.from(JSON.stringify([last.createdAt, last.id])).toString('base64url')
    : null
  return { items, nextCursor }
})

await serve(app)
