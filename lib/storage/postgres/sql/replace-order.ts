// replace on PostgreSQL: a compare-and-set on version that stores the order, its event (a move's or a change's) and a change's idempotency claim in one statement.
import { eventJson } from '../../../feed/events.js'
import type { NewOrder } from '../../../http/schemas.js'
import { balanceSign } from '../../balance-sign.js'
import type { OrdersCapability } from '../../order-storage.js'
import { columnText, type Run } from '../client.js'
import type { Tables } from '../tables.js'

/** Reports the transaction (its `pg_current_xact_id()`) in which a change stored the event `eventId`. */
export type OnWritten = (eventId: string, tx: string) => void

/** An order's columns, as every write stores them beside its document. */
export function orderParams (order: NewOrder, orderJson: string): unknown[] {
  return [
    columnText(order.id), columnText(order.customerId), columnText(order.status), order.createdAt, order.version,
    order.reference === undefined ? null : columnText(order.reference), orderJson
  ]
}

export function replaceOrder ({ orders, events, keys }: Tables, run: Run, onWritten?: OnWritten): OrdersCapability['replace'] {
  const store = (where: string) => `updated AS (
      UPDATE ${orders} SET (id, customer_id, status, created_at, version, reference, document, balance_sign) =
        ($1::text, $2::text, $3::text, $4::text, $5::bigint, $6::text, $7::text::json, $12::smallint)
      WHERE ${where} AND version = $8::bigint RETURNING id
    )
    INSERT INTO ${events} (id, aggregatetype, aggregateid, type, payload, at)
    SELECT $9::uuid, 'order', id, $13::text, $10::text::json, $11::text FROM updated
    RETURNING tx::text AS tx`
  const update = `WITH ${store('id = $1::text')}`
  // With a change's claim: the order is locked at the expected version first, so that the claim is made
  // only for a change that is then stored; a live claim of the key (one expiring after this change)
  // makes no row, and then nothing is updated. Takes over an expired claim, as a create does.
  const claimAndUpdate = `WITH locked AS (
      SELECT id FROM ${orders} WHERE id = $1::text AND version = $8::bigint FOR UPDATE
    ), claim AS (
      INSERT INTO ${keys} (key, fingerprint, order_id, expires_at, answer)
      SELECT $14::text, $15::text::json, id, $16::text, $7::text::json FROM locked
      ON CONFLICT (key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, order_id = EXCLUDED.order_id, expires_at = EXCLUDED.expires_at, answer = EXCLUDED.answer
        WHERE ${keys}.expires_at <= $17::text
      RETURNING order_id
    ), ${store('id = (SELECT order_id FROM claim)')}`

  return async function replace (order, expectedVersion, event, claim) {
    const orderJson = JSON.stringify(order)
    const params = [...orderParams(order, orderJson), expectedVersion, event.id, eventJson(event, orderJson), event.at, balanceSign(order), event.type]
    const [row] = claim === undefined
      ? await run<{ tx: string }>(update, params)
      : await run<{ tx: string }>(claimAndUpdate, [...params, columnText(claim.key), JSON.stringify(claim.fingerprint), claim.expiresAt, order.updatedAt])
    if (row === undefined) return false
    onWritten?.(event.id, row.tx)
    return true
  }
}
