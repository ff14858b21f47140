// A getOrderList query made canonical: defaults filled, lists sorted, instants spelled as stored, the cursor read.
import { decodeCursor, type NormalizedQuery } from './cursor.js'
import type { ListOrdersQuery } from './schemas.js'
import type { StorageListQuery } from './storage/types.js'
import { validationError } from './validation.js'

const EARLIEST = '0000-01-01T00:00:00.000Z'
const LATEST = '9999-12-31T23:59:59.999Z'

/** A date-time filter value as the stored timestamps spell it, so strings compare as instants. */
function toTimestamp (value: string, field: string): string {
  const millis = Date.parse(value)
  if (Number.isNaN(millis)) {
    throw validationError([{ instancePath: `/filter/${field}`, message: 'must match format "date-time"' }], 'body')
  }
  const timestamp = new Date(millis).toISOString()
  return timestamp < EARLIEST || timestamp.startsWith('+') ? (millis < 0 ? EARLIEST : LATEST) : timestamp
}

export interface ReadListQuery {
  /** What the cursor of the next page is bound to. */
  normalized: NormalizedQuery
  /** The page the storage reads, one order more than asked so the rules know whether another follows; without scope. */
  storageQuery: StorageListQuery
  /** How many orders the page holds at most. */
  limit: number
}

/** Reads a query that passed the schema; throws ORDER_INVALID_CURSOR for a cursor of another query. */
export function readListQuery (query: ListOrdersQuery, defaultLimit: number): ReadListQuery {
  const { filter = {}, order = 'desc', limit = defaultLimit, cursor } = query
  const statuses = filter.status === undefined
    ? undefined
    : typeof filter.status === 'string' ? [filter.status] : [...filter.status].sort()
  const ids = filter.ids === undefined ? undefined : [...new Set(filter.ids)].sort()
  const createdFrom = filter.createdFrom === undefined ? undefined : toTimestamp(filter.createdFrom, 'createdFrom')
  const createdTo = filter.createdTo === undefined ? undefined : toTimestamp(filter.createdTo, 'createdTo')
  const { customerId, number, reference } = filter
  const normalized: NormalizedQuery = { order, customerId, number, reference, statuses, ids, createdFrom, createdTo }
  const after = cursor === undefined ? undefined : decodeCursor(cursor, normalized)
  return {
    normalized,
    storageQuery: { customerId, number, reference, statuses, ids, createdFrom, createdTo, order, after, limit: limit + 1 },
    limit
  }
}
