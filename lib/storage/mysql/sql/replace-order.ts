// replace on MySQL: a compare-and-set on version that stores the order, its event (a move's or a change's) and a change's idempotency claim in one transaction.
import { eventJson } from '../../../feed/events.js'
import type { OrdersCapability } from '../../order-storage.js'
import type { Tables } from '../tables.js'
import { changeClaims } from './claim-change.js'
import type { Transaction } from './create-order.js'
import { orderColumns } from './get-order.js'

/** What a replace did: stored the change, found the version stale, or found a live claim of the change's key. */
export type Replaced = 'stored' | 'stale' | 'claimed'

/**
 * replace's statements, in `transaction`. The version a replace expects was read after the change
 * that made it had committed, so its event took an earlier seq than this one's: each order's events
 * reach the feed in version order. Every replace moves `version`, so the row matched is the row
 * changed, whatever CLIENT_FOUND_ROWS says. A change's claim is made first, so a live one stops it
 * before anything is written. In the host's transaction (`joined`), where a failed statement undoes
 * only itself, the event goes first and is removed again (with the claim) when the version is stale,
 * so a failure leaves nothing half-written.
 */
export function replaceWith (tables: Tables, transaction: Transaction, joined = false): (...args: Parameters<OrdersCapability['replace']>) => Promise<Replaced> {
  const { orders, events } = tables
  const update = `UPDATE ${orders} SET customer_id = ?, status = ?, store = ?, reference = ?, created_at = ?, version = ?, document = ?, balance_sign = ?
    WHERE id = ? AND version = ?`
  const insertEvent = `INSERT INTO ${events} (id, aggregatetype, aggregateid, type, payload, at) VALUES (?, 'order', ?, ?, ?, ?)`
  const removeEvent = `DELETE FROM ${events} WHERE id = ?`
  const claims = changeClaims(tables)

  return (order, expectedVersion, event, claim) => transaction(async session => {
    const { write } = session
    const [id, ...columns] = orderColumns(order)
    if (claim !== undefined && !await claims.claim(session, order, claim)) return 'claimed'
    // The event's order is the document column's JSON with the number put first, as a read puts it.
    const orderJson = `{"number":${order.number},${(columns[6] as string).slice(1)}`
    const store = () => write(insertEvent, [event.id, id, event.type, eventJson(event, orderJson), event.at])
    if (joined) await store()
    const updated = await write(update, [...columns, id, expectedVersion])
    if (updated.affectedRows !== 1) {
      if (joined) await write(removeEvent, [event.id])
      if (claim !== undefined) await claims.unclaim(session, order, claim)
      return 'stale'
    }
    if (!joined) await store()
    return 'stored'
  })
}

export function replaceOrder (tables: Tables, transaction: Transaction): OrdersCapability['replace'] {
  const replace = replaceWith(tables, transaction)
  return async (...args) => await replace(...args) === 'stored'
}
