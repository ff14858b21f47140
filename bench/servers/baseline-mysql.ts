// The same two routes hand-written on bare Fastify with mysql2, as a user who keeps orders in MySQL or MariaDB would.
import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise'
import {
  CreateOrderBodySchema, ListOrdersBodySchema, OrderErrorSchema, OrderPageSchema, OrderSchema,
  type CreateOrderInput, type ListOrdersQuery, type Order
} from '../../lib/index.js'
import { openPool } from '../mysql.js'
import { serve } from './serve.js'

// BENCH_OUTBOX=1: each create also writes a Debezium-style outbox row in the same transaction, the
// durable event a user writes by hand; otherwise the order alone, in one statement.
const outbox = process.env.BENCH_OUTBOX === '1'
const table = outbox ? 'bench_mysql_baseline_orders' : 'bench_mysql_baseline_plain_orders'
const outboxTable = 'bench_mysql_baseline_outbox'
const { pool, close } = await openPool()
const dropTables = `DROP TABLE IF EXISTS ${table}${outbox ? `, ${outboxTable}` : ''}`

await pool.query(dropTables)
// Ids and keys compare as bytes (utf8mb4_bin), as the plugin keeps them. An order number from
// AUTO_INCREMENT, unique; the client's reference unique per customer (NULLs never collide in a UNIQUE index).
await pool.query(`CREATE TABLE ${table} (
  id VARCHAR(36) COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
  customer_id VARCHAR(100) COLLATE utf8mb4_bin NOT NULL,
  created_at DATETIME(3) NOT NULL,
  number BIGINT NOT NULL AUTO_INCREMENT UNIQUE,
  reference VARCHAR(100) COLLATE utf8mb4_bin NULL,
  doc LONGTEXT COLLATE utf8mb4_bin NOT NULL,
  KEY ${table}_customer (customer_id, created_at, id),
  UNIQUE KEY ${table}_reference (customer_id, reference)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`)
if (outbox) {
  await pool.query(`CREATE TABLE ${outboxTable} (
    id CHAR(36) COLLATE utf8mb4_bin NOT NULL PRIMARY KEY, aggregatetype VARCHAR(20) NOT NULL,
    aggregateid VARCHAR(36) COLLATE utf8mb4_bin NOT NULL, type VARCHAR(20) NOT NULL, payload LONGTEXT NOT NULL
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`)
}
const insertOrder = `INSERT INTO ${table} (id, customer_id, created_at, reference, doc) VALUES (?, ?, ?, ?, ?)`
const insertEvent = `INSERT INTO ${outboxTable} (id, aggregatetype, aggregateid, type, payload) VALUES (?, 'order', ?, 'created', ?)`
const selectPage = (limit: number) => `SELECT doc, number FROM ${table} WHERE customer_id = ? ORDER BY created_at DESC, id DESC LIMIT ${limit}`
/** DATETIME(3) takes no zone: the instant in UTC, as 'YYYY-MM-DD HH:MM:SS.mmm'. */
const datetime = (iso: string) => iso.slice(0, 23).replace('T', ' ')

// As strict as the plugin: no coercion, unknown properties rejected rather than dropped, no defaults.
const app = Fastify({ ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false } } })
app.addSchema(OrderSchema)
app.addSchema(OrderErrorSchema)
app.addHook('onClose', async () => {
  await pool.query(dropTables)
  await close()
})

/** Stores the order (its document without the number, which the row's column holds); with the outbox, and its event, in one transaction. Returns its number. */
async function store (order: Omit<Order, 'number'>): Promise<number> {
  const params = [order.id, order.customerId, datetime(order.createdAt), order.reference ?? null, JSON.stringify(order)]
  if (!outbox) return (await pool.execute<ResultSetHeader>(insertOrder, params))[0].insertId
  const connection = await pool.getConnection()
  try {
    await connection.beginTransaction()
    const [{ insertId: number }] = await connection.execute<ResultSetHeader>(insertOrder, params)
    await connection.execute(insertEvent, [randomUUID(), order.id, JSON.stringify({ ...order, number })])
    await connection.commit()
    return number
  } catch (err) {
    await connection.rollback()
    throw err
  } finally {
    connection.release()
  }
}

app.post('/order/createOrder', {
  schema: { body: CreateOrderBodySchema, response: { 201: { $ref: 'Order#' }, 400: { $ref: 'OrderError#' }, 409: { $ref: 'OrderError#' } } }
}, async (request, reply) => {
  const { customerId, currency, items, metadata = {}, reference } = request.body as CreateOrderInput
  let total = 0
  for (const { quantity, unitPrice } of items) total += quantity * unitPrice
  if (total > Number.MAX_SAFE_INTEGER) return reply.code(400).send({ statusCode: 400, code: 'ORDER_TOTAL_TOO_LARGE', error: 'Bad Request', message: 'total too large' })
  const createdAt = new Date().toISOString()
  const order: Omit<Order, 'number'> = {
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
  if (reference !== undefined) order.reference = reference
  try {
    return reply.code(201).send({ ...order, number: await store(order) })
  } catch (err) {
    if ((err as { errno?: number }).errno !== 1062) throw err
    return reply.code(409).send({ statusCode: 409, code: 'ORDER_REFERENCE_TAKEN', error: 'Conflict', message: 'reference taken' })
  }
})

// Only what the benchmark asks for: the newest page of one customer's orders, by keyset.
app.post('/order/getOrderList', {
  schema: { body: ListOrdersBodySchema, response: { 200: OrderPageSchema, 400: { $ref: 'OrderError#' } } }
}, async (request) => {
  const { limit = 20, filter } = (request.body ?? {}) as ListOrdersQuery
  const [rows] = await pool.execute<RowDataPacket[]>(selectPage(limit + 1), [filter?.customerId ?? ''])
  const items: Order[] = rows.slice(0, limit).map(row => ({ ...JSON.parse(row.doc), number: Number(row.number) }))
  const last = items[items.length - 1]
  const nextCursor = rows.length > limit && last !== undefined
    ? Buffer.from(JSON.stringify([last.createdAt, last.id])).toString('base64url')
    : null
  return { items, nextCursor }
})

await serve(app)
