// listEvents on PostgreSQL: a page of the readable feed after an event, told apart from an unknown one in one statement.
import type { OrderEvent } from '../../../feed/events.js'
import type { FeedCapability } from '../../order-storage.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'
import { readableEvents } from './readable-events.js'

export function listEvents (tables: Tables, run: Run): FeedCapability['listEvents'] {
  const firstEvents = `SELECT page.payload FROM (${readableEvents(tables, 'e.payload::text AS payload', undefined, '$1::int')}) AS page`
  // One row even when the page is empty, so "after is unknown" and "nothing new" are told apart.
  const eventsAfter = `SELECT after.id IS NOT NULL AS found, page.payload FROM (SELECT 1) AS one
    LEFT JOIN ${tables.events} AS after ON after.id = $1::uuid
    LEFT JOIN LATERAL (${readableEvents(tables, 'e.payload::text AS payload', '(after.epoch, after.tx, after.seq)', '$2::int')}) AS page ON true
    ORDER BY page.epoch, page.tx, page.seq`

  return async function list ({ after, limit }): Promise<OrderEvent[] | undefined> {
    if (after === undefined) {
      return (await run<{ payload: string }>(firstEvents, [limit])).map(row => JSON.parse(row.payload))
    }
    const rows = await run<{ found: boolean, payload: string | null }>(eventsAfter, [after, limit])
    if (!rows[0]!.found) return undefined
    return rows[0]!.payload === null ? [] : rows.map(row => JSON.parse(row.payload!))
  }
}
