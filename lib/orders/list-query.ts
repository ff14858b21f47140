// A getOrderList query made canonical: defaults filled, lists sorted, instants spelled as stored, the cursor read.
import { decodeCursor, type CursorPosition } from './cursor.js'
import type { ListOrdersQuery, PageFilter } from '../http/schemas.js'
import { validationError } from '../http/validation.js'

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

export interface PageQuery {
  /** The canonical filter, without scope: what the cursor of the next page is bound to. */
  filter: PageFilter
  order: 'asc' | 'desc'
  /** Where the page starts: the position of the cursor (and how far the view of the page before had got). */
  after: CursorPosition | undefined
  /** How many orders the page holds at most. */
  limit: number
}

/** Reads a query that passed the schema; throws ORDER_INVALID_CURSOR for a cursor of another query. */
export function readListQuery (query: ListOrdersQuery, defaultLimit: number): PageQuery {
  const { order = 'desc', limit = defaultLimit, cursor } = query
  const filter: PageFilter = {}
  const given = query.filter as Record<string, unknown> | undefined
  for (const key in given) {
    const value = given[key]
    if (value === undefined) continue
    if (key === 'status') filter.statuses = typeof value === 'string' ? [value] : [...value as string[]].sort()
    else if (key === 'ids') filter.ids = [...new Set(value as string[])].sort()
    else if (key === 'createdFrom' || key === 'createdTo') filter[key] = toTimestamp(value as string, key)
    else (filter as Record<string, unknown>)[key] = value
  }
  return { filter, order, after: cursor === undefined ? undefined : decodeCursor(cursor, order, filter), limit }
}
