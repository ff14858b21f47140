// memoryStorage(): the in-process default, indexed so a page costs the same at any store size.
import type { Order } from '../schemas.js'
import type { CreateResult, IdempotencyClaim, OrderStorage, StorageListQuery } from './types.js'

/** An order's slot in the indexes; `createdAt` and `id` never change, so its place in them never does. */
interface Entry {
  order: Order
}

interface StoredClaim {
  fingerprint: string
  orderId: string
  expiresAt: string
}

interface Position {
  createdAt: string
  id: string
}

/** Ascending (createdAt, id) comparison: negative when a comes first. */
function compare (a: Position, b: Position): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1
}

/** Index of the first entry at or after `position` in ascending order. */
function lowerBound (entries: readonly Entry[], position: Position): number {
  let low = 0
  let high = entries.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (compare(entries[middle]!.order, position) < 0) low = middle + 1
    else high = middle
  }
  return low
}

// Orders mostly arrive in createdAt order, but ids are random, so orders of one millisecond land
// among the last few entries: a short scan back from the end finds their place without a search.
// 32 covers the orders of one millisecond at tens of thousands of creates per second.
const SCAN_BACK = 32

function insert (entries: Entry[], entry: Entry): void {
  let index = entries.length
  const stop = Math.max(0, index - SCAN_BACK)
  while (index > stop && compare(entries[index - 1]!.order, entry.order) > 0) index--
  if (index === entries.length) entries.push(entry)
  else if (index > stop || index === 0) entries.splice(index, 0, entry)
  else entries.splice(lowerBound(entries, entry.order), 0, entry)
}

function remove (entries: Entry[], entry: Entry): void {
  entries.splice(lowerBound(entries, entry.order), 1)
}

/** Walks one index in the requested direction, within the created range and after the cursor. */
function * walk (entries: readonly Entry[], query: StorageListQuery): Generator<Entry> {
  const { createdFrom, createdTo, after } = query
  // '' sorts before every id, so (date, '') bounds the orders created at that date.
  const from = createdFrom === undefined ? 0 : lowerBound(entries, { createdAt: createdFrom, id: '' })
  const to = createdTo === undefined ? entries.length : lowerBound(entries, { createdAt: createdTo, id: '' })
  if (query.order === 'asc') {
    let index = from
    if (after !== undefined) {
      const next = lowerBound(entries, after)
      index = Math.max(index, next < entries.length && compare(entries[next]!.order, after) === 0 ? next + 1 : next)
    }
    for (; index < to; index++) yield entries[index]!
  } else {
    let index = to - 1
    if (after !== undefined) index = Math.min(index, lowerBound(entries, after) - 1)
    for (; index >= from; index--) yield entries[index]!
  }
}

/** True when a comes strictly before b in the requested order. */
function precedes (a: Position, b: Position, order: 'asc' | 'desc'): boolean {
  const sign = compare(a, b)
  return order === 'asc' ? sign < 0 : sign > 0
}

function matches (order: Order, query: StorageListQuery): boolean {
  const { customerId, statuses, createdFrom, createdTo, after } = query
  return (customerId === undefined || order.customerId === customerId) &&
    (statuses === undefined || statuses.includes(order.status)) &&
    (createdFrom === undefined || order.createdAt >= createdFrom) &&
    (createdTo === undefined || order.createdAt < createdTo) &&
    (after === undefined || precedes(after, order, query.order))
}

/**
 * The embedded default storage: orders live in this process and are gone when it exits.
 * Fine for tests, examples and single-process apps; use a database adapter to keep orders.
 */
export function memoryStorage (): OrderStorage {
  // Two indexes answer every filter: one per status, one per (customer, status). Without a status
  // filter a page merges the walks of every status; there are few, so a page still costs the same
  // at any store size, and each create pays for two index inserts, not four.
  const byId = new Map<string, Entry>()
  const byStatus = new Map<string, Entry[]>()
  const byCustomerStatus = new Map<string, Entry[]>()
  const claims = new Map<string, StoredClaim>()
  // Claims in the order they were made, for purging expired ones; `head` is the oldest unpurged one.
  const claimQueue: string[] = []
  let head = 0

  const indexOf = (map: Map<string, Entry[]>, key: string): Entry[] => {
    let entries = map.get(key)
    if (entries === undefined) map.set(key, entries = [])
    return entries
  }
  // Statuses never hold a NUL, so the first NUL ends the status and the key is unambiguous.
  const customerStatusKey = (customerId: string, status: string) => `${status}\u0000${customerId}`

  function purgeExpiredClaims (now: string): void {
    while (head < claimQueue.length) {
      const key = claimQueue[head]!
      const claim = claims.get(key)
      if (claim !== undefined && claim.expiresAt > now) break
      if (claim !== undefined) claims.delete(key)
      head++
    }
    if (head > 1024 && head * 2 > claimQueue.length) {
      claimQueue.splice(0, head)
      head = 0
    }
  }

  function create (order: Order, claim?: IdempotencyClaim): CreateResult {
    if (claim !== undefined) {
      purgeExpiredClaims(order.createdAt)
      const stored = claims.get(claim.key)
      if (stored !== undefined && stored.expiresAt > order.createdAt) {
        return { created: false, order: byId.get(stored.orderId)!.order, fingerprint: stored.fingerprint }
      }
    }
    if (byId.has(order.id)) throw new Error(`order id ${order.id} is already stored`)
    const entry: Entry = { order }
    byId.set(order.id, entry)
    insert(indexOf(byStatus, order.status), entry)
    insert(indexOf(byCustomerStatus, customerStatusKey(order.customerId, order.status)), entry)
    if (claim !== undefined) {
      claims.set(claim.key, { fingerprint: claim.fingerprint, orderId: order.id, expiresAt: claim.expiresAt })
      claimQueue.push(claim.key)
    }
    return { created: true, order }
  }

  function list (query: StorageListQuery): Order[] {
    const { customerId, statuses, ids, limit } = query
    if (ids !== undefined) {
      const found: Order[] = []
      for (const id of new Set(ids)) {
        const entry = byId.get(id)
        if (entry !== undefined && matches(entry.order, query)) found.push(entry.order)
      }
      return found.sort((a, b) => precedes(a, b, query.order) ? -1 : 1).slice(0, limit)
    }
    // Indexes that answer the filter exactly, so no entry is read and skipped.
    const wanted = statuses ?? [...byStatus.keys()]
    const indexes = customerId === undefined
      ? wanted.map(status => byStatus.get(status))
      : wanted.map(status => byCustomerStatus.get(customerStatusKey(customerId, status)))

    const walks = indexes.filter(entries => entries !== undefined).map(entries => walk(entries, query))
    const heads = walks.map(cursor => cursor.next().value as Entry | undefined)
    const page: Order[] = []
    while (page.length < limit) {
      let best = -1
      for (let i = 0; i < heads.length; i++) {
        const candidate = heads[i]
        if (candidate !== undefined && (best === -1 || precedes(candidate.order, heads[best]!.order, query.order))) best = i
      }
      if (best === -1) break
      page.push(heads[best]!.order)
      heads[best] = walks[best]!.next().value as Entry | undefined
    }
    return page
  }

  function replace (order: Order, expectedVersion: number): boolean {
    const entry = byId.get(order.id)
    if (entry === undefined || entry.order.version !== expectedVersion) return false
    const previous = entry.order
    if (previous.status !== order.status) {
      remove(byStatus.get(previous.status)!, entry)
      remove(byCustomerStatus.get(customerStatusKey(previous.customerId, previous.status))!, entry)
      entry.order = order
      insert(indexOf(byStatus, order.status), entry)
      insert(indexOf(byCustomerStatus, customerStatusKey(order.customerId, order.status)), entry)
    } else {
      entry.order = order
    }
    return true
  }

  return {
    create: async (order, claim) => create(order, claim),
    get: async (id) => byId.get(id)?.order,
    list: async (query) => list(query),
    replace: async (order, expectedVersion) => replace(order, expectedVersion)
  }
}
