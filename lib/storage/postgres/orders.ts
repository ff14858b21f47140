// Orders on PostgreSQL: create (claiming an idempotency key), get, compare-and-set replace; each with its event, in one statement.
import type { OrderEvent } from '../../events.js'
import type { Order } from '../../schemas.js'
import type { CreateResult, IdempotencyClaim, OrderStore } from '../types.js'
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
function payloadOf (event: OrderEvent, orderJson: string): string {
  const from = event.type === 'statusChanged' ? `,"from":${JSON.stringify(event.from)}` : ''
  return `{"id":"${event.id}","type":"${event.type}","at":"${event.at}","order":${orderJson}${from}}`
}

const orderColumns = '(id, customer_id, status, created_at, version, document)'
const orderValues = '$1::text, $2::text, $3::text, $4::text, $5::bigint, $6::text::json'
const orderParams = (order: Order, orderJson: string) => [
  columnText(order.id), columnText(order.customerId), columnText(order.status), order.createdAt, order.version, orderJson
]
const eventParams = (event: OrderEvent, orderJson: string) => [event.id, event.type, payloadOf(event, orderJson), event.at]

export function orderStore ({ orders, keys, events }: Tables, run: Run): Omit<OrderStore, 'list'> {
  // The event row of the change that `source` (a CTE returning the order id) stored, from four
  // parameters from `first` on: in the same statement as the change, so both commit or neither does.
  const insertEvent = (source: string, first: number) => `INSERT INTO ${events} (id, aggregatetype, aggregateid, type, payload, at)
    SELECT $${first}::uuid, 'order', ${source}.id, $${first + 1}::text, $${first + 2}::text::json, $${first + 3}::text FROM ${source}`

  // The claim of a key that is live at an instant, and its order, as exactly one row.
  const liveClaim = (key: string, instant: string) => `k.fingerprint::text AS fingerprint, o.document::text AS document
    FROM (SELECT 1) AS one
    LEFT JOIN ${keys} AS k ON k.key = ${key}::text AND k.expires_at > ${instant}::text
    LEFT JOIN ${orders} AS o ON o.id = k.order_id`

  // One statement claims the key (new, or expired and taken over), inserts the order only if the claim
  // was made, and otherwise reads the live claim. A claim committed by another instance while this
  // statement waited is not in its snapshot: that shows as a null document.
  const claimAndInsert = `WITH claim AS (
      INSERT INTO ${keys} (key, fingerprint, order_id, expires_at) VALUES ($7::text, $8::text::json, $1::text, $9::text)
      ON CONFLICT (key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, order_id = EXCLUDED.order_id, expires_at = EXCLUDED.expires_at
        WHERE ${keys}.expires_at <= $4::text
      RETURNING order_id
    ), inserted AS (
      INSERT INTO ${orders} ${orderColumns} SELECT ${orderValues} FROM claim RETURNING id
    ), event AS (
      ${insertEvent('inserted', 10)}
    )
    SELECT EXISTS (SELECT 1 FROM inserted) AS created, ${liveClaim('$7', '$4')}`
  const readClaim = `SELECT ${liveClaim('$1', '$2')}`
  const insert = `WITH inserted AS (INSERT INTO ${orders} ${orderColumns} VALUES (${orderValues}) RETURNING id)
    ${insertEvent('inserted', 7)}`
  const getOrder = `SELECT document::text AS document FROM ${orders} WHERE id = $1::text`
  const update = `WITH updated AS (
      UPDATE ${orders} SET ${orderColumns} = (${orderValues}) WHERE id = $1::text AND version = $7::bigint RETURNING id
    )
    ${insertEvent('updated', 8)} RETURNING 1`
  // Expired keys, oldest first, skipping any a concurrent create is taking over.
  const purgeKeys = `DELETE FROM ${keys} WHERE key IN (
      SELECT key FROM ${keys} WHERE expires_at <= $1::text ORDER BY expires_at LIMIT $2::int FOR UPDATE SKIP LOCKED)
    RETURNING 1`

  async function create (order: Order, event: OrderEvent, claim?: IdempotencyClaim): Promise<CreateResult> {
    const orderJson = JSON.stringify(order)
    if (claim === undefined) {
      await run(insert, [...orderParams(order, orderJson), ...eventParams(event, orderJson)])
      return { created: true, order }
    }
    const key = columnText(claim.key)
    const [outcome] = await run<ClaimRow & { created: boolean }>(claimAndInsert, [
      ...orderParams(order, orderJson), key, JSON.stringify(claim.fingerprint), claim.expiresAt, ...eventParams(event, orderJson)
    ])
    if (outcome!.created) return { created: true, order }
    // A fresh statement sees what a concurrent claim committed while the first one waited on it.
    const [live] = outcome!.document === null ? await run<ClaimRow>(readClaim, [key, order.createdAt]) : [outcome!]
    if (live!.document === null) return { created: false, inProgress: true }
    return { created: false, order: JSON.parse(live!.document), fingerprint: JSON.parse(live!.fingerprint!) }
  }

  return {
    create,
    async get (id) {
      const [row] = await run<{ document: string }>(getOrder, [columnText(id)])
      return row === undefined ? undefined : JSON.parse(row.document)
    },
    async replace (order, expectedVersion, event) {
      const orderJson = JSON.stringify(order)
      const rows = await run(update, [...orderParams(order, orderJson), expectedVersion, ...eventParams(event, orderJson)])
      return rows.length === 1
    },
    purgeIdempotencyKeys: async (now, limit) => (await run(purgeKeys, [now, limit])).length
  }
}
