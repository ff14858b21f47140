// get on PostgreSQL: one order by its primary key.
import type { OrdersCapability } from '../../order-storage.js'
import { columnText, type Run } from '../client.js'
import type { Tables } from '../tables.js'

export function getOrder ({ orders }: Tables, run: Run): OrdersCapability['get'] {
  const text = `SELECT document::text AS document FROM ${orders} WHERE id = $1::text`
  return async function get (id) {
    const [row] = await run<{ document: string }>(text, [columnText(id)])
    return row === undefined ? undefined : JSON.parse(row.document)
  }
}
