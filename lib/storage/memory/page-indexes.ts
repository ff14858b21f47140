// The sorted runs of orders a page walks, one per status and value of an index's fields, kept in step with every stored change.
import type { Order } from '../../http/schemas.js'
import type { StorageListQuery } from '../order-storage.js'
import { comparePositions } from '../../orders/position.js'
import { mergePage, SortedOrders } from './sorted.js'

type EqualityFilter = 'customerId' | 'store' | 'balance'

/**
 * The equality filters the indexes answer: each index keeps one run per status and value of its
 * fields, so a page walks exactly the orders it lists, one run per status of the filter, merged. A
 * page's equality filters pick the index with exactly those fields. `balance` is the sign of the
 * order's balance.
 */
const INDEXED: ReadonlyArray<readonly EqualityFilter[]> = [
  [], ['customerId'], ['store'], ['store', 'customerId'],
  ['balance'], ['balance', 'customerId'], ['balance', 'store'], ['balance', 'store', 'customerId']
]

// A bit for each equality filter; a page's filters, as the sum of theirs, pick its index from BY_FILTERS.
const BIT: Record<EqualityFilter, number> = { customerId: 1, store: 2, balance: 4 }
const BY_FILTERS = Array.from({ length: 8 }, (_, bits) => INDEXED.findIndex(fields => fields.reduce((sum, field) => sum | BIT[field], 0) === bits))

// What a list query holds besides its equality filters on stored properties: walked, looked up or
// derived (the balance's sign), never compared as equal to a property.
const NOT_EQUALITY = new Set(['order', 'after', 'limit', 'statuses', 'ids', 'createdFrom', 'createdTo', 'balance'])

/** The sign of an order's balance, as `filter.balance` names it; an order stored without a balance owes its total. */
function balanceOf ({ balance, total }: Order & { balance?: number }): NonNullable<StorageListQuery['balance']> {
  const owed = balance ?? total
  return owed > 0 ? 'due' : owed === 0 ? 'settled' : 'owed'
}

/** Whether `order` passes every filter of `query` but the cursor, which the walk applies. */
export function matches (order: Order, query: StorageListQuery): boolean {
  const { statuses, ids, createdFrom, createdTo, balance } = query
  if ((statuses !== undefined && !statuses.includes(order.status)) || (ids !== undefined && !ids.includes(order.id)) ||
    (createdFrom !== undefined && order.createdAt < createdFrom) || (createdTo !== undefined && order.createdAt >= createdTo) ||
    (balance !== undefined && balanceOf(order) !== balance)) return false
  for (const key in query) {
    const value = query[key as keyof StorageListQuery]
    if (value !== undefined && !NOT_EQUALITY.has(key) && order[key as keyof Order] !== value) return false
  }
  return true
}

/** The value of an index field of a stored order. */
function orderValue (order: Order, field: EqualityFilter): string | undefined {
  return field === 'customerId' ? order.customerId : field === 'store' ? order.store : balanceOf(order)
}

/** The value of an index field a page asks for (its `balance` is the sign already). */
function queryValue (query: StorageListQuery, field: EqualityFilter): string | undefined {
  return field === 'customerId' ? query.customerId : field === 'store' ? query.store : query.balance
}

/** An index's runs: by status, then by the value of each of its fields in turn. */
interface RunTree extends Map<string, RunTree | SortedOrders> {}

interface Index {
  fields: readonly EqualityFilter[]
  runs: RunTree
}

/**
 * The run of `status` and the values `source` gives of `index`'s fields, made if `make` is set;
 * undefined when the source has no value of a field (an order without a store) or, unless made, when
 * no order was stored in it.
 */
function runOf<S> (index: Index, status: string, source: S, valueOf: (source: S, field: EqualityFilter) => string | undefined, make: boolean): SortedOrders | undefined {
  let tree = index.runs
  let key = status
  for (const field of index.fields) {
    const value = valueOf(source, field)
    if (value === undefined) return undefined
    let next = tree.get(key) as RunTree | undefined
    if (next === undefined) {
      if (!make) return undefined
      tree.set(key, next = new Map())
    }
    tree = next
    key = value
  }
  let run = tree.get(key) as SortedOrders | undefined
  if (run === undefined && make) tree.set(key, run = new SortedOrders())
  return run
}

/** The index whose fields are exactly the equality filters `query` gives. */
function indexOf ({ customerId, store, balance }: StorageListQuery): number {
  return BY_FILTERS[(customerId === undefined ? 0 : BIT.customerId) | (store === undefined ? 0 : BIT.store) | (balance === undefined ? 0 : BIT.balance)]!
}

/**
 * The sorted indexes of pages, kept in step with every stored change. Those by the balance's sign are
 * built at the first page that asks for one (from `all`, every stored order) and kept from then on:
 * a host with changes off never asks, and never pays for them.
 */
export function pageIndexes (all: () => Iterable<Order>) {
  const indexes: Index[] = INDEXED.map(fields => ({ fields, runs: new Map() }))
  // The indexes kept in step with every change: all but those by the balance's sign, until a page asks for one.
  const kept = indexes.filter(({ fields }) => !fields.includes('balance'))
  // References walk in page order too, one run per reference across customers, and one per store and
  // reference (joined by a NUL, which no store key holds), so a store's page never walks other stores'.
  const byReference = new Map<string, SortedOrders>()
  const byStoreReference = new Map<string, SortedOrders>()
  const runIn = (runs: Map<string, SortedOrders>, key: string) => runs.get(key) ?? runs.set(key, new SortedOrders()).get(key)!
  const storeReference = (store: string, reference: string) => `${store}\u0000${reference}`
  const statuses = new Set<string>()
  return {
    add (order: Order): void {
      statuses.add(order.status)
      for (const index of kept) {
        const run = runOf(index, order.status, order, orderValue, true)
        if (run !== undefined) run.insert(order)
      }
      if (order.reference === undefined) return
      runIn(byReference, order.reference).insert(order)
      if (order.store !== undefined) runIn(byStoreReference, storeReference(order.store, order.reference)).insert(order)
    },
    /** Puts `order` where `previous` (the same order, another version) was. */
    replace (previous: Order, order: Order): void {
      statuses.add(order.status)
      for (const index of kept) {
        // Customer and store never change, so an order is in the same indexes at every version; its
        // status and balance move it between runs.
        const before = runOf(index, previous.status, previous, orderValue, false)
        if (before === undefined) continue
        const after = runOf(index, order.status, order, orderValue, true)!
        if (before === after) before.swap(order)
        else {
          before.remove(previous)
          after.insert(order)
        }
      }
      if (order.reference === undefined) return
      byReference.get(order.reference)!.swap(order)
      if (order.store !== undefined) byStoreReference.get(storeReference(order.store, order.reference))!.swap(order)
    },
    /** A page walked from the runs that hold exactly the query's orders, or from a reference's run checking the rest. */
    page (query: StorageListQuery): Order[] {
      if (query.reference !== undefined) {
        const run = query.store === undefined ? byReference.get(query.reference) : byStoreReference.get(storeReference(query.store, query.reference))
        return mergePage([run], query, order => matches(order, query))
      }
      const index = indexes[indexOf(query)]!
      if (!kept.includes(index)) {
        for (const balanced of indexes) {
          if (kept.includes(balanced)) continue
          const made = new Map<SortedOrders, Order[]>()
          for (const order of all()) {
            const run = runOf(balanced, order.status, order, orderValue, true)
            if (run === undefined) continue
            const orders = made.get(run) ?? made.set(run, []).get(run)!
            orders.push(order)
          }
          for (const [run, orders] of made) for (const order of orders.sort(comparePositions)) run.insert(order)
          kept.push(balanced)
        }
      }
      return mergePage([...query.statuses ?? statuses].map(status => runOf(index, status, query, queryValue, false)), query)
    }
  }
}
