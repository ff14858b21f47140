// Opaque keyset cursors: a position (createdAt, id) bound to the filter and order that issued it.
import { createHash } from 'node:crypto'
import { codes } from './errors.js'

/** A place in the (createdAt, id) order of orders; a page starts just after it. */
export interface CursorPosition {
  createdAt: string
  id: string
}

const VERSION = 1
const BASE64URL = /^[\w-]{1,1024}$/

// Clients page through the same few filters again and again: their digests are remembered rather
// than hashed on every page. Bounded in count and key length, so any mix of filters costs little memory.
const remembered = new Map<string, string>()
const MAX_REMEMBERED = 256
const MAX_REMEMBERED_LENGTH = 512

/** A short digest of a normalized filter and order, so a cursor cannot be reused with another query. */
export function queryFingerprint (canonicalQuery: unknown): string {
  const query = JSON.stringify(canonicalQuery)
  let fingerprint = remembered.get(query)
  if (fingerprint === undefined) {
    fingerprint = createHash('sha256').update(query).digest('base64url').slice(0, 16)
    if (query.length <= MAX_REMEMBERED_LENGTH) {
      if (remembered.size === MAX_REMEMBERED) remembered.clear()
      remembered.set(query, fingerprint)
    }
  }
  return fingerprint
}

export function encodeCursor ({ createdAt, id }: CursorPosition, fingerprint: string): string {
  return Buffer.from(JSON.stringify([VERSION, Date.parse(createdAt), id, fingerprint])).toString('base64url')
}

/** Reads a cursor issued by `encodeCursor` for the same fingerprint; anything else is ORDER_INVALID_CURSOR. */
export function decodeCursor (cursor: string, fingerprint: string): CursorPosition {
  if (BASE64URL.test(cursor)) {
    let fields: unknown
    try {
      fields = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    } catch {
      throw new codes.ORDER_INVALID_CURSOR()
    }
    if (Array.isArray(fields) && fields.length === 4) {
      const [version, millis, id, issuedFor] = fields
      if (version === VERSION && issuedFor === fingerprint && Number.isSafeInteger(millis) &&
          Math.abs(millis) <= 8.64e15 && typeof id === 'string' && id.length > 0 && id.length <= 128) {
        return { createdAt: new Date(millis).toISOString(), id }
      }
    }
  }
  throw new codes.ORDER_INVALID_CURSOR()
}
