// Opaque keyset cursors: a position (createdAt, id) bound to the filter and order that issued it.
import { codes } from '../errors.js'
import { order as limits } from '../limits.js'
import type { OrderPosition } from './position.js'
import type { PageFilter } from '../http/schemas.js'

// Version 1 is "1.<createdAt>.<check>.<id>"; version 2, "2.<view>.<createdAt>.<check>.<id>", also carries how
// far the view that listed the page had got (a storage's token: visible ASCII without "."). The id comes
// last, so it may hold any character.
const CURSOR = new RegExp(`^(?:1|2\\.([!-\\-/-~]{1,64}))\\.([+-]?\\d{4,6}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z)\\.([\\da-z]{10})\\.(.{1,${limits.idLength}})$`, 's')

// FNV-1a over length-prefixed fields, so no two queries and positions give one input.
function mixText (hash: number, text: string | undefined, prime: number): number {
  if (text === undefined) return Math.imul(hash ^ -1, prime)
  hash = Math.imul(hash ^ text.length, prime)
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), prime)
  return hash
}

function mixList (hash: number, texts: readonly string[] | undefined, prime: number): number {
  if (texts === undefined) return Math.imul(hash ^ -1, prime)
  hash = Math.imul(hash ^ texts.length, prime)
  for (const text of texts) hash = mixText(hash, text, prime)
  return hash
}

// The filters every cursor has mixed since the first release, absent or not; later ones are mixed by name when given.
const FIRST_FILTERS = new Set(['customerId', 'statuses', 'ids', 'createdFrom', 'createdTo'])

/** One 25-bit lane of the check, as 5 base-36 digits; `later` are the later filters given, as mixed. */
function lane (order: string, filter: PageFilter, later: readonly string[], createdAt: string, id: string, basis: number, prime: number): string {
  let hash = mixText(basis, order, prime)
  hash = mixText(hash, filter.customerId, prime)
  hash = mixList(hash, filter.statuses, prime)
  hash = mixList(hash, filter.ids, prime)
  hash = mixText(hash, filter.createdFrom, prime)
  hash = mixText(hash, filter.createdTo, prime)
  for (const text of later) hash = mixText(hash, text, prime)
  hash = mixText(hash, createdAt, prime)
  hash = mixText(hash, id, prime)
  return (hash >>> 7).toString(36).padStart(5, '0')
}

/**
 * A 50-bit check of a position and the normalized query it belongs to: a cursor that was altered, or
 * is sent with another filter or order, fails it. It guards against mistakes, not attackers: a cursor
 * grants nothing, since scope and filter apply to every page.
 */
function checkOf (order: string, filter: PageFilter, createdAt: string, id: string): string {
  // Mixed only when given, by name in name order, so a cursor of a query without them keeps its check.
  const keys: string[] = []
  for (const key in filter) if (!FIRST_FILTERS.has(key) && (filter as Record<string, unknown>)[key] !== undefined) keys.push(key)
  if (keys.length > 1) keys.sort()
  const later = keys.map(key => {
    const value = (filter as Record<string, unknown>)[key]
    return `${key}:${typeof value === 'string' ? value : JSON.stringify(value)}`
  })
  return lane(order, filter, later, createdAt, id, 0x811c9dc5, 0x01000193) + lane(order, filter, later, createdAt, id, 0x050c5d1f, 0x5bd1e995)
}

/** Where a page starts, and how far the view of the page before had got (a storage's token), when it says. */
export type CursorPosition = OrderPosition & { view?: string }

/**
 * The cursor of the page after `position`, for the order and canonical filter that listed it; with
 * `view` (a storage's token of how far that page's view had got), bound to it too.
 */
export function encodeCursor ({ createdAt, id }: OrderPosition, order: string, filter: PageFilter, view?: string): string {
  if (view === undefined) return `1.${createdAt}.${checkOf(order, filter, createdAt, id)}.${id}`
  return `2.${view}.${createdAt}.${checkOf(order, filter, createdAt, `${view}.${id}`)}.${id}`
}

/** Reads a cursor issued by `encodeCursor` for the same order and filter; anything else is ORDER_INVALID_CURSOR. */
export function decodeCursor (cursor: string, order: string, filter: PageFilter): CursorPosition {
  const fields = CURSOR.exec(cursor)
  if (fields !== null) {
    const [, view, createdAt, check, id] = fields as unknown as [string, string | undefined, string, string, string]
    // A real instant, spelled as stored timestamps are (the spelling toISOString gives).
    const time = Date.parse(createdAt)
    if (!Number.isNaN(time) && new Date(time).toISOString() === createdAt && check === checkOf(order, filter, createdAt, view === undefined ? id : `${view}.${id}`)) {
      return view === undefined ? { createdAt, id } : { createdAt, id, view }
    }
  }
  throw new codes.ORDER_INVALID_CURSOR()
}
