// replace on MySQL: a compare-and-set on version that stores the order and its statusChanged event in one transaction.
import { eventJson } from '../../../feed/events.js'
import type { OrdersCapability } from '../../order-storage.js'
import type { Tables } from '../tables.js'
import type { Transaction } from './create-order.js'
import { orderColumns } from './get-order.js'

/**
 * replace's statements, in `transaction`. The version a replace expects was read after the change
 * that made it had committed, so its event took an earlier seq than this one's: each order's events
 * reach the feed in version order. Every replace moves `version`, so the row matched is the row
 * changed, whatever CLIENT_FOUND_ROWS says. In the host's transaction (`joined`), where a failed
 * statement undoes only itself, the event goes first and is removed again when the version is stale,
 * so a failure leaves nothing half-written.
 */
export function replaceOrder ({ orders, events }: Tables, transaction: Transaction, joined = false): OrdersCapability['replace'] {
  const update = `UPDATE ${orders} SET customer_id = ?, status = ?, store = ?, reference = ?, created_at = ?, version = ?, document = ?
    WHERE id = ? AND version = ?`
  const insertEvent = `INSERT INTO ${events} (id, aggregatetype, aggregateid, type, payload, at) VALUES (?, 'order', ?, 'statusChanged', ?, ?)`
  const removeEvent = `DELETE FROM ${events} WHERE id = ?`

  return (order, expectedVersion, event) => transaction(async ({ write }) => {
    const [id, ...columns] = orderColumns(order)
    const store = () => write(insertEvent, [event.id, id, eventJson(event, JSON.stringify(order)), event.at])
    if (joined) await store()
    const updated = await write(update, [...columns, id, expectedVersion])
    if (updated.affectedRows !== 1) {
      if (joined) await write(removeEvent, [event.id])
      return false
    }
    if (!joined) await store()
    return true
  })
}
