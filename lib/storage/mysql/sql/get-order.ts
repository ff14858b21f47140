// get on MySQL: one order by its primary key, its number put back into its document.
import type { NewOrder } from '../../../http/schemas.js'
import { balanceSign } from '../../balance-sign.js'
import type { OrdersCapability } from '../../order-storage.js'
import { columnText, parsedJson, textBytes, type Session } from '../client.js'
import type { Tables } from '../tables.js'

/**
 * The order as stored: the document is the order's JSON without its number (drawn from AUTO_INCREMENT
 * by the insert itself), which a read puts first again, read as bytes (textBytes).
 */
export const ORDER_DOCUMENT = `${textBytes('CONCAT(\'{"number":\', number, \',\', SUBSTRING(document, 2))')} AS document`

/** The columns of an order as every write stores them: id, customer_id, status, store, reference, created_at, version, document, balance_sign. */
export function orderColumns (order: NewOrder): unknown[] {
  const { number: _, ...document } = order as NewOrder & { number?: number }
  return [
    columnText(order.id), columnText(order.customerId), columnText(order.status), order.store === undefined ? '' : columnText(order.store),
    order.reference === undefined ? null : columnText(order.reference), order.createdAt, order.version, JSON.stringify(document),
    balanceSign(order)
  ]
}

export function getOrder ({ orders }: Tables, session: Session): OrdersCapability['get'] {
  const text = `SELECT ${ORDER_DOCUMENT} FROM ${orders} WHERE id = ?`
  return async function get (id) {
    const [row] = await session.run<{ document: Buffer }>(text, [columnText(id)])
    return row === undefined ? undefined : parsedJson(row.document)
  }
}
