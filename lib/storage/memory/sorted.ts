// Orders kept sorted by (createdAt, id) in chunks, and the runs of them a page walks.
import { comparePositions, type OrderPosition } from '../../orders/position.js'
import type { Order } from '../../http/schemas.js'
import type { StorageListQuery } from '../order-storage.js'

/** Index of the first order at or after `position` in ascending order. */
function lowerBound (orders: readonly Order[], position: OrderPosition): number {
  let low = 0
  let high = orders.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (comparePositions(orders[middle]!, position) < 0) low = middle + 1
    else high = middle
  }
  return low
}

/** True when a comes strictly before b in the requested order. */
export function precedes (a: OrderPosition, b: OrderPosition, order: 'asc' | 'desc'): boolean {
  const sign = comparePositions(a, b)
  return order === 'asc' ? sign < 0 : sign > 0
}

/**
 * A place among the orders of a `SortedOrders`: the order at `index` of chunk `chunk`. The place after
 * the last order is (chunks, 0), the place before the first (-1, 0); no other place names a missing order.
 */
interface Place { chunk: number, index: number }

/** Negative when place a comes before b. */
const comparePlaces = (a: Place, b: Place) => a.chunk - b.chunk || a.index - b.index

/**
 * Orders in ascending (createdAt, id) order, held in chunks of at most `chunkSize` (each chunk's orders
 * before the next one's, none empty), so that an order put in or taken out anywhere moves at most a
 * chunk's orders, not every order after it: a move to a status whose run is long lands mid-run.
 */
export class SortedOrders {
  readonly chunks: Order[][] = []
  readonly #chunkSize: number

  constructor (chunkSize = 512) {
    this.#chunkSize = chunkSize
  }

  /** The place of the first order at or after `position`. */
  lowerBound (position: OrderPosition): Place {
    const { chunks } = this
    // The first chunk whose last order is at or after the position holds it, if any does.
    let low = 0
    let high = chunks.length
    while (low < high) {
      const middle = (low + high) >>> 1
      const chunk = chunks[middle]!
      if (comparePositions(chunk[chunk.length - 1]!, position) < 0) low = middle + 1
      else high = middle
    }
    return { chunk: low, index: low === chunks.length ? 0 : lowerBound(chunks[low]!, position) }
  }

  /** The order at `place`, which names one. */
  at ({ chunk, index }: Place): Order {
    return this.chunks[chunk]![index]!
  }

  /** Moves `place` one order later (step 1) or earlier (step -1), and gives it back. */
  advance (place: Place, step: 1 | -1): Place {
    const { chunks } = this
    if (step === 1) {
      if (++place.index === chunks[place.chunk]!.length) {
        place.chunk++
        place.index = 0
      }
    } else if (--place.index < 0) {
      place.index = --place.chunk < 0 ? 0 : chunks[place.chunk]!.length - 1
    }
    return place
  }

  insert (order: Order): void {
    const { chunks } = this
    const last = chunks[chunks.length - 1]
    // The plugin's ids ascend with creation time, so a new order almost always goes last.
    if (last === undefined || comparePositions(last[last.length - 1]!, order) < 0) {
      if (last !== undefined && last.length < this.#chunkSize) last.push(order)
      else chunks.push([order])
      return
    }
    const { chunk, index } = this.lowerBound(order)
    const orders = chunks[chunk]!
    orders.splice(index, 0, order)
    // A full chunk splits in two halves, each with room for as many again.
    if (orders.length > this.#chunkSize) chunks.splice(chunk + 1, 0, orders.splice(orders.length >>> 1))
  }

  remove (order: Order): void {
    const { chunk, index } = this.lowerBound(order)
    const orders = this.chunks[chunk]!
    orders.splice(index, 1)
    if (orders.length === 0) this.chunks.splice(chunk, 1)
  }

  /** Puts the new version of an order in its predecessor's place: createdAt and id never change. */
  swap (order: Order): void {
    const { chunk, index } = this.lowerBound(order)
    this.chunks[chunk]![index] = order
  }
}

/** The part of one index a page reads: from `next` towards `end` (exclusive) by `step`. */
interface Run {
  orders: SortedOrders
  next: Place
  end: Place
  step: 1 | -1
}

/** The run of one index in the requested direction, within the created range and after the cursor; its places are its own. */
function runOf (orders: SortedOrders, query: StorageListQuery): Run {
  const { createdFrom, createdTo, after } = query
  // '' sorts before every id, so (date, '') bounds the orders created at that date.
  const from = createdFrom === undefined ? { chunk: 0, index: 0 } : orders.lowerBound({ createdAt: createdFrom, id: '' })
  const to = createdTo === undefined ? { chunk: orders.chunks.length, index: 0 } : orders.lowerBound({ createdAt: createdTo, id: '' })
  const later = (a: Place, b: Place) => comparePlaces(a, b) > 0 ? a : b
  if (query.order === 'asc') {
    let next = from
    if (after !== undefined) {
      const place = orders.lowerBound(after)
      const past = comparePlaces(place, to) < 0 && comparePositions(orders.at(place), after) === 0 ? orders.advance(place, 1) : place
      next = later(next, past)
    }
    return { orders, next, end: later(next, to), step: 1 }
  }
  let next = orders.advance(to, -1)
  if (after !== undefined) {
    const place = orders.advance(orders.lowerBound(after), -1)
    if (comparePlaces(place, next) < 0) next = place
  }
  const end = orders.advance(from, -1)
  return { orders, next, end: comparePlaces(end, next) < 0 ? end : next, step: -1 }
}

/**
 * A page merged from the runs of several sorted indexes, each of which matches the filter exactly, or
 * whose orders `accept` checks one by one (a walk that reads what it skips).
 */
export function mergePage (indexes: ReadonlyArray<SortedOrders | undefined>, query: StorageListQuery, accept?: (order: Order) => boolean): Order[] {
  const runs: Run[] = []
  for (const orders of indexes) {
    if (orders === undefined) continue
    const run = runOf(orders, query)
    if (comparePlaces(run.next, run.end) !== 0) runs.push(run)
  }
  const page: Order[] = []
  // A merge of the runs' heads; with one run (the common case) it is a plain walk.
  while (page.length < query.limit && runs.length > 0) {
    let best = runs[0]!
    for (let i = 1; i < runs.length; i++) {
      const run = runs[i]!
      if (precedes(run.orders.at(run.next), best.orders.at(best.next), query.order)) best = run
    }
    const order = best.orders.at(best.next)
    if (accept === undefined || accept(order)) page.push(order)
    best.orders.advance(best.next, best.step)
    if (comparePlaces(best.next, best.end) === 0) runs.splice(runs.indexOf(best), 1)
  }
  return page
}
