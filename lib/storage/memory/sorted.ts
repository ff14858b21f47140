// Orders kept sorted by (createdAt, id), and the runs of them a page walks.
import { comparePositions, type OrderPosition } from '../../orders/position.js'
import type { Order } from '../../http/schemas.js'
import type { StorageListQuery } from '../order-storage.js'

/** Index of the first order at or after `position` in ascending order. */
export function lowerBound (orders: readonly Order[], position: OrderPosition): number {
  let low = 0
  let high = orders.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (comparePositions(orders[middle]!, position) < 0) low = middle + 1
    else high = middle
  }
  return low
}

export function insert (orders: Order[], order: Order): void {
  // The plugin's ids ascend with creation time, so a new order almost always goes last.
  const last = orders[orders.length - 1]
  if (last === undefined || comparePositions(last, order) < 0) orders.push(order)
  else orders.splice(lowerBound(orders, order), 0, order)
}

export function remove (orders: Order[], order: Order): void {
  orders.splice(lowerBound(orders, order), 1)
}

/** Puts the new version of an order in its predecessor's place: createdAt and id never change. */
export function swap (orders: Order[], order: Order): void {
  orders[lowerBound(orders, order)] = order
}

/** True when a comes strictly before b in the requested order. */
export function precedes (a: OrderPosition, b: OrderPosition, order: 'asc' | 'desc'): boolean {
  const sign = comparePositions(a, b)
  return order === 'asc' ? sign < 0 : sign > 0
}

/** The part of one index a page reads: from `next` towards `end` (exclusive) by `step`. */
interface Run {
  orders: readonly Order[]
  next: number
  end: number
  step: 1 | -1
}

/** The run of one index in the requested direction, within the created range and after the cursor. */
function runOf (orders: readonly Order[], query: StorageListQuery): Run {
  const { createdFrom, createdTo, after } = query
  // '' sorts before every id, so (date, '') bounds the orders created at that date.
  const from = createdFrom === undefined ? 0 : lowerBound(orders, { createdAt: createdFrom, id: '' })
  const to = createdTo === undefined ? orders.length : lowerBound(orders, { createdAt: createdTo, id: '' })
  if (query.order === 'asc') {
    let next = from
    if (after !== undefined) {
      const position = lowerBound(orders, after)
      next = Math.max(next, position < orders.length && comparePositions(orders[position]!, after) === 0 ? position + 1 : position)
    }
    return { orders, next, end: Math.max(next, to), step: 1 }
  }
  let next = to - 1
  if (after !== undefined) next = Math.min(next, lowerBound(orders, after) - 1)
  return { orders, next, end: Math.min(next, from - 1), step: -1 }
}

/**
 * A page merged from the runs of several sorted indexes, each of which matches the filter exactly, or
 * whose orders `accept` checks one by one (a walk that reads what it skips).
 */
export function mergePage (indexes: ReadonlyArray<readonly Order[] | undefined>, query: StorageListQuery, accept?: (order: Order) => boolean): Order[] {
  const runs: Run[] = []
  for (const orders of indexes) {
    if (orders === undefined) continue
    const run = runOf(orders, query)
    if (run.next !== run.end) runs.push(run)
  }
  const page: Order[] = []
  // A merge of the runs' heads; with one run (the common case) it is a plain walk.
  while (page.length < query.limit && runs.length > 0) {
    let best = runs[0]!
    for (let i = 1; i < runs.length; i++) {
      const run = runs[i]!
      if (precedes(run.orders[run.next]!, best.orders[best.next]!, query.order)) best = run
    }
    const order = best.orders[best.next]!
    if (accept === undefined || accept(order)) page.push(order)
    best.next += best.step
    if (best.next === best.end) runs.splice(runs.indexOf(best), 1)
  }
  return page
}
