// Orders on PostgreSQL: create (claiming an idempotency key, drawing a number), get, compare-and-set replace; each with its event, in one statement.
import type { OrderStatusChangedEvent } from '../../events.js'
import type { NewOrder } from '../../schemas.js'
import type { CreateResult, IdempotencyClaim, NewOrderCreatedEvent, OrderStore } from '../types.js'
import { columnText, type Run } from './client.js'
import type { Tables } from './tables.js'

/** One row of an idempotency lookup: both null unless the key is live and its order stored. */
interface ClaimRow {
  fingerprint: string | null
  document: string | null
}

/**
 * The event as its `payload` column holds it, built around the order's JSON rather than serializing
 * the order a second time. The keys are those of OrderEvent, in its order.
 */
function payloadOf (event: OrderStatusChangedEvent, orderJson: string): string {
  return `{"id":"${event.id}","type":"statusChanged","at":"${event.at}","order":${orderJson},"from":${JSON.stringify(event.from)}}`
}

/** Whether `err` is the unique index of (customer, reference) refusing a second order. */
function isReferenceTaken (err: unknown, { indexes }: Tables): boolean {
  const { code, constraint } = err as { code?: unknown, constraint?: unknown }
  return code === '23505' && constraint === indexes.reference.slice(1, -1)
}

/** Reports the transaction (its `pg_current_xact_id()`) in which a change stored the event `eventId`. */
export type OnWritten = (eventId: string, tx: string) => void

interface Written {
  tx: string
}

const orderColumns = '(id, customer_id, status, created_at, version, reference, document)'
const orderValues = '$1::text, $2::text, $3::text, $4::text, $5::bigint, $6::text, $7::text::json'
const orderParams = (order: NewOrder, orderJson: string) => [
  columnText(order.id), columnText(order.customerId), columnText(order.status), order.createdAt, order.version,
  order.reference === undefined ? null : columnText(order.reference), orderJson
]
const eventParams = (event: OrderStatusChangedEvent, orderJson: string) => [event.id, event.type, payloadOf(event, orderJson), event.at]

/**
 * The parameters of a new order and its created event, around the number the statement draws: the
 * document is `{"number":` + number + `,` + the rest of the order's JSON, and so is the event's order.
 */
function newOrderParams (order: NewOrder, event: NewOrderCreatedEvent): unknown[] {
  const rest = `,${JSON.stringify(order).slice(1)}`
  return [
    columnText(order.id), columnText(order.customerId), columnText(order.status), order.createdAt, order.version,
    order.reference === undefined ? null : columnText(order.reference), rest,
    event.id, `{"id":"${event.id}","type":"created","at":"${event.at}","order":{"number":`
  ]
}

export function orderStore (tables: Tables, run: Run, onWritten?: OnWritten): Omit<OrderStore, 'list'> {
  const { orders, keys, events, numbers } = tables
  // The new order from `source` (a CTE of one row with the claim, or none), numbered by the sequence,
  // and its created event: in one statement, so both commit or neither does, and the number is drawn
  // only when the order is inserted. Returns the number and the writing transaction.
  const insertNumbered = (source: string) => `numbered AS (
      SELECT nextval('${numbers}') AS number FROM ${source}
    ), inserted AS (
      INSERT INTO ${orders} (id, customer_id, status, created_at, version, reference, number, document)
      SELECT $1::text, $2::text, $3::text, $4::text, $5::bigint, $6::text, number, ('{"number":' || number || $7::text)::json FROM numbered
      RETURNING id, number
    ), event AS (
      INSERT INTO ${events} (id, aggregatetype, aggregateid, type, payload, at)
      SELECT $8::uuid, 'order', id, 'created', ($9::text || number || $7::text || '}')::json, $4::text FROM inserted
      RETURNING tx
    )`
  const written = '(SELECT number::text FROM inserted) AS number, (SELECT tx::text FROM event) AS tx'

  // The claim of a key that is live at an instant, and its order, as exactly one row.
  const liveClaim = (key: string, instant: string) => `k.fingerprint::text AS fingerprint, o.document::text AS document
    FROM (SELECT 1) AS one
    LEFT JOIN ${keys} AS k ON k.key = ${key}::text AND k.expires_at > ${instant}::text
    LEFT JOIN ${orders} AS o ON o.id = k.order_id`

  // One statement claims the key (new, or expired and taken over), inserts the order only if the claim
  // was made, and otherwise reads the live claim. A claim committed by another instance while this
  // statement waited is not in its snapshot: that shows as a null document.
  const claimAndInsert = `WITH claim AS (
      INSERT INTO ${keys} (key, fingerprint, order_id, expires_at) VALUES ($10::text, $11::text::json, $1::text, $12::text)
      ON CONFLICT (key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, order_id = EXCLUDED.order_id, expires_at = EXCLUDED.expires_at
        WHERE ${keys}.expires_at <= $4::text
      RETURNING order_id
    ), ${insertNumbered('claim')}
    SELECT ${written}, ${liveClaim('$10', '$4')}`
  const readClaim = `SELECT ${liveClaim('$1', '$2')}`
  const insert = `WITH ${insertNumbered('(SELECT 1) AS one')} SELECT ${written}`
  const getOrder = `SELECT document::text AS document FROM ${orders} WHERE id = $1::text`
  const update = `WITH updated AS (
      UPDATE ${orders} SET ${orderColumns} = (${orderValues}) WHERE id = $1::text AND version = $8::bigint RETURNING id
    )
    INSERT INTO ${events} (id, aggregatetype, aggregateid, type, payload, at)
    SELECT $9::uuid, 'order', id, $10::text, $11::text::json, $12::text FROM updated
    RETURNING tx::text AS tx`
  // Expired keys, oldest first, skipping any a concurrent create is taking over.
  const purgeKeys = `DELETE FROM ${keys} WHERE key IN (
      SELECT key FROM ${keys} WHERE expires_at <= $1::text ORDER BY expires_at LIMIT $2::int FOR UPDATE SKIP LOCKED)
    RETURNING 1`

  /** The created order with the number the statement drew, reported to `onWritten`. */
  function numbered (order: NewOrder, event: NewOrderCreatedEvent, row: { number: string, tx: string }): CreateResult {
    onWritten?.(event.id, row.tx)
    return { created: true, order: { ...order, number: Number(row.number) } }
  }

  async function insertWith (order: NewOrder, event: NewOrderCreatedEvent, claim?: IdempotencyClaim): Promise<CreateResult> {
    const params = newOrderParams(order, event)
    if (claim === undefined) {
      const [row] = await run<{ number: string, tx: string }>(insert, params)
      return numbered(order, event, row!)
    }
    const key = columnText(claim.key)
    const [outcome] = await run<ClaimRow & { number: string | null, tx: string }>(claimAndInsert, [
      ...params, key, JSON.stringify(claim.fingerprint), claim.expiresAt
    ])
    if (outcome!.number !== null) return numbered(order, event, outcome as { number: string, tx: string })
    // A fresh statement sees what a concurrent claim committed while the first one waited on it.
    const [live] = outcome!.document === null ? await run<ClaimRow>(readClaim, [key, order.createdAt]) : [outcome!]
    if (live!.document === null) return { created: false, inProgress: true }
    return { created: false, order: JSON.parse(live!.document), fingerprint: JSON.parse(live!.fingerprint!) }
  }

  async function create (order: NewOrder, event: NewOrderCreatedEvent, claim?: IdempotencyClaim): Promise<CreateResult> {
    try {
      return await insertWith(order, event, claim)
    } catch (err) {
      // The unique index refused the reference: the statement, claim included, stored nothing.
      if (isReferenceTaken(err, tables)) return { created: false, referenceTaken: true }
      throw err
    }
  }

  return {
    create,
    async get (id) {
      const [row] = await run<{ document: string }>(getOrder, [columnText(id)])
      return row === undefined ? undefined : JSON.parse(row.document)
    },
    async replace (order, expectedVersion, event) {
      const orderJson = JSON.stringify(order)
      const [row] = await run<Written>(update, [...orderParams(order, orderJson), expectedVersion, ...eventParams(event, orderJson)])
      if (row === undefined) return false
      onWritten?.(event.id, row.tx)
      return true
    },
    purgeIdempotencyKeys: async (now, limit) => (await run(purgeKeys, [now, limit])).length
  }
}
