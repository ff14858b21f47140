// Opaque keyset cursors: a position (createdAt, id) bound to the filter and order that issued it.
import { codes } from './errors.js'

/** A place in the (createdAt, id) order of orders; a page starts just after it. */
export interface CursorPosition {
  createdAt: string
  id: string
}

/** A filter and order after normalization: equal queries, however spelled, have equal fields. */
export interface NormalizedQuery {
  order: 'asc' | 'desc'
  customerId?: string | undefined
  statuses?: readonly string[] | undefined
  ids?: readonly string[] | undefined
  createdFrom?: string | undefined
  createdTo?: string | undefined
}

// Version 1 is "1.<createdAt ms, base 36>.<check>.<id>". The id comes last, so it may hold any character.
const CURSOR = /^1\.(-?[\da-z]{1,11})\.([\da-z]{1,11})\.(.{1,128})$/s

// The check's state. checkOf runs start to end without yielding, so one pair serves every call.
let high = 0
let low = 0

function mix (value: number): void {
  high = Math.imul(high ^ value, 0x01000193)
  low = Math.imul(low ^ value, 0x5bd1e995)
}

function mixText (value: string | undefined): void {
  if (value === undefined) return mix(-1)
  mix(value.length)
  for (let i = 0; i < value.length; i++) mix(value.charCodeAt(i))
}

function mixList (values: readonly string[] | undefined): void {
  if (values === undefined) return mix(-1)
  mix(values.length)
  for (const value of values) mixText(value)
}

/**
 * A 52-bit check of a position and the normalized query it belongs to: a cursor that was altered, or
 * is sent with another filter or order, fails it. It guards against mistakes, not attackers (a cursor
 * grants nothing: scope and filter apply to every page). Two FNV-1a lanes over length-prefixed fields.
 */
function checkOf (query: NormalizedQuery, millis: string, id: string): string {
  high = 0x811c9dc5
  low = 0x050c5d1f
  mixText(query.order)
  mixText(query.customerId)
  mixList(query.statuses)
  mixList(query.ids)
  mixText(query.createdFrom)
  mixText(query.createdTo)
  mixText(millis)
  mixText(id)
  return ((high >>> 0) * 0x100000 + (low >>> 12)).toString(36)
}

/** The cursor of the page after `position`, for the query that listed it. */
export function encodeCursor ({ createdAt, id }: CursorPosition, query: NormalizedQuery): string {
  const millis = Date.parse(createdAt).toString(36)
  return `1.${millis}.${checkOf(query, millis, id)}.${id}`
}

/** Reads a cursor issued by `encodeCursor` for the same query; anything else is ORDER_INVALID_CURSOR. */
export function decodeCursor (cursor: string, query: NormalizedQuery): CursorPosition {
  const fields = CURSOR.exec(cursor)
  if (fields !== null) {
    const [, millis, check, id] = fields as unknown as [string, string, string, string]
    const time = Number.parseInt(millis, 36)
    if (Math.abs(time) <= 8.64e15 && check === checkOf(query, millis, id)) {
      return { createdAt: new Date(time).toISOString(), id }
    }
  }
  throw new codes.ORDER_INVALID_CURSOR()
}
