// replace on PostgreSQL: a compare-and-set on version that stores the order and its statusChanged event in one statement.
import { eventJson } from '../../../feed/events.js'
import type { NewOrder } from '../../../http/schemas.js'
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

export function replaceOrder ({ orders, events }: Tables, run: Run, onWritten?: OnWritten): OrdersCapability['replace'] {
  const update = `WITH updated AS (
      UPDATE ${orders} SET (id, customer_id, status, created_at, version, reference, document) =
        ($1::text, $2::text, $3::text, $4::text, $5::bigint, $6::text, $7::text::json)
      WHERE id = $1::text AND version = $8::bigint RETURNING id
    )
    INSERT INTO ${events} (id, aggregatetype, aggregateid, type, payload, at)
    SELECT $9::uuid, 'order', id, 'statusChanged', $10::text::json, $11::text FROM updated
    RETURNING tx::text AS tx`

  return async function replace (order, expectedVersion, event) {
    const orderJson = JSON.stringify(order)
    const [row] = await run<{ tx: string }>(update, [...orderParams(order, orderJson), expectedVersion, event.id, eventJson(event, orderJson), event.at])
    if (row === undefined) return false
    onWritten?.(event.id, row.tx)
    return true
  }
}
