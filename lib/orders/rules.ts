// The order rules: totals, the workflow, changes, idempotency and scope over the storage. The routes, app.orders and the host's transaction all call them.
import type { CustomFieldValues } from '../custom-fields/types.js'
import type { CustomFieldRules } from '../custom-fields/values.js'
import { encodeCursor } from './cursor.js'
import { codes } from '../errors.js'
import { changedEvent, createdEvent, statusChangedEvent, type OrderEvent, type OrderReplacedEvent } from '../feed/events.js'
import { changeFingerprintOf, checkIdempotencyKey, claimOf, fingerprintOf, replayOf } from './idempotency.js'
import { isoTime, newOrderId } from './ids.js'
import { page } from '../limits.js'
import { readListQuery } from './list-query.js'
import type { ChangeOrderInput, CreateOrderInput, ListOrdersQuery, NewOrder, Order, OrderPage, OrderWithChanges, StatusChange, UpdateOrderStatusInput } from '../http/schemas.js'
import { inScope, type OrderScope } from './scope.js'
import type { ChangesCapability, IdempotencyClaim, OrdersCapability, ReplicaReads, StorageListQuery } from '../storage/order-storage.js'
import { floorsOver } from './consistency.js'
import { runGuard, type TransitionMove } from './guards.js'
import { applyChange, cancelledAll, NONE, totalOf, withLedger, withoutEmptyLedger } from './changes.js'
import { runChangeGuard, type ChangesConfig, type OrderChangeProposal } from './change-options.js'
import type { CompiledWorkflow } from './workflow.js'

export interface OrderCallOptions {
  /** What the caller may see and touch (with a `customerId` or a `store`, only those orders), and who acts (`actor`). */
  scope?: OrderScope | undefined
  /** create and change: makes a retried call safe, as the Idempotency-Key header does. */
  idempotencyKey?: string | undefined
  /** updateStatus and change: told of the order once found in scope, so telemetry names only an order that exists. */
  found?: ((order: Order) => void) | undefined
  /** list, over replicas: a token of `onConsistency` (from any instance) that the page must include. */
  consistency?: string | undefined
  /** list, over replicas: read from the primary. */
  primary?: boolean | undefined
  /** create, updateStatus and change, over replicas: given the token of the write once it committed. */
  onConsistency?: ((token: string) => void) | undefined
}

/** The operations, on input that has passed the schemas and a scope that has been checked. */
export interface OrderRules {
  /** The new order, or with a key claimed before the first one (`replayed`). */
  create: (input: CreateOrderInput, options?: OrderCallOptions) => Promise<{ order: Order, replayed: boolean }>
  list: (query: ListOrdersQuery, options?: OrderCallOptions) => Promise<OrderPage>
  /** The order after the move, or as it is when it already has the status. */
  updateStatus: (input: UpdateOrderStatusInput, options?: OrderCallOptions) => Promise<Order>
  /**
   * With changes on: the order after the change (or as it would be, for a preview; as it is, when
   * every action was skipped), or as the first call with the key left it (`replayed`).
   */
  change: (input: ChangeOrderInput, options?: OrderCallOptions) => Promise<{ order: OrderWithChanges, replayed: boolean }>
}

/** What a write decided on the order as stored: the order to store with its event, or the answer without a write. */
type Decision = { next: Order, event: OrderReplacedEvent } | { answer: Order }

export interface OrderRulesConfig {
  /** Its failures are already ORDER_STORAGE_UNAVAILABLE; `readChangeClaim` is there whenever changes are on. */
  storage: Pick<OrdersCapability, 'create' | 'get' | 'list' | 'replace'> & Partial<ChangesCapability>
  workflow: CompiledWorkflow
  fields: CustomFieldRules
  /** Freezes an order handed to host code (a guard): a storage may hold the same object. */
  freeze: (order: Order) => Order
  maxPageSize: number
  idempotencyTtl: number
  /**
   * Runs after each stored change, with its event as the feed holds it; what it returns is awaited
   * before the caller gets the order, and it returns nothing when there is nothing to wait for.
   */
  changed: (event: OrderEvent) => Promise<void> | void
  /** The `changes` option; undefined while changes are off. */
  changes: ChangesConfig | undefined
  /** Pages from replicas (its failures already ORDER_STORAGE_UNAVAILABLE); undefined without replicas. */
  reads?: ReplicaReads | undefined
}

// The filters a scope fixes.
const SCOPED = ['customerId', 'store'] as const

/** The later of now and the order's last change, so history stays in time order even if this instance's clock lags the last writer's. */
function changedAt (current: Order): string {
  const now = isoTime(Date.now())
  return now > current.updatedAt ? now : current.updatedAt
}

/** A history entry: `reason` and `by` (the scope's actor) only when there is one. */
function changeOf (status: string, at: string, reason: string | undefined, scope: OrderScope | undefined): StatusChange {
  const change: StatusChange = { status, at }
  if (reason !== undefined) change.reason = reason
  if (scope?.actor !== undefined) change.by = scope.actor
  return change
}

/** The order after a move to `status` at `at`: one more history entry, one more version. */
function movedOrder (current: Order, status: string, at: string, reason: string | undefined, scope: OrderScope | undefined, customFields: object | undefined): Order {
  const next: Order = {
    ...current,
    status,
    version: current.version + 1,
    statusHistory: [...current.statusHistory, changeOf(status, at, reason, scope)],
    updatedAt: at
  }
  if (customFields !== undefined) (next as { customFields?: object }).customFields = customFields
  return next
}

/**
 * The order a create stores, before the storage numbers it, in the scope's store when the body names
 * none, with the ledger of a new order when changes are on; ORDER_FORBIDDEN for another customer or
 * store than the scope's.
 */
function newOrderOf (input: CreateOrderInput, scope: OrderScope | undefined, initial: string, now: number, ledger: boolean): NewOrder {
  if (scope?.customerId !== undefined && scope.customerId !== input.customerId) {
    throw new codes.ORDER_FORBIDDEN('create an order for another customer')
  }
  if (scope?.store !== undefined && input.store !== undefined && input.store !== scope.store) {
    throw new codes.ORDER_FORBIDDEN('create an order in another store')
  }
  const total = totalOf(input.items)
  if (total > Number.MAX_SAFE_INTEGER) throw new codes.ORDER_TOTAL_TOO_LARGE(Number.MAX_SAFE_INTEGER)
  const createdAt = isoTime(now)
  const id = newOrderId(now)
  const { customerId, currency, items } = input
  const metadata = input.metadata ?? {}
  const statusHistory = [changeOf(initial, createdAt, undefined, scope)]
  // Two literals rather than the ledger's properties added after: V8 then makes each order in one
  // step, its properties in the object itself rather than in an array of their own. The items are the
  // validated input's own: a parsed request body, or app.orders' copy.
  const order: NewOrder & Partial<Pick<OrderWithChanges, 'paid' | 'balance' | 'payments' | 'changes'>> = ledger
    ? { id, customerId, status: initial, currency, items, total, metadata, paid: 0, balance: total, payments: NONE, changes: NONE, version: 1, statusHistory, createdAt, updatedAt: createdAt }
    : { id, customerId, status: initial, currency, items, total, metadata, version: 1, statusHistory, createdAt, updatedAt: createdAt }
  if (input.reference !== undefined) order.reference = input.reference
  const store = input.store ?? scope?.store
  if (store !== undefined) order.store = store
  return order
}

export function orderRules ({ storage, workflow, fields, freeze, maxPageSize, idempotencyTtl, changed, changes, reads }: OrderRulesConfig): OrderRules {
  const defaultLimit = Math.min(page.defaultSize, maxPageSize)
  const floors = reads === undefined ? undefined : floorsOver(reads)

  /** Over replicas: the write's token becomes its scope's floor and is handed to the caller. */
  async function committed<T> (result: T, { scope, onConsistency }: OrderCallOptions): Promise<T> {
    if (floors === undefined) return result
    const token = floors.wrote(scope)
    if (onConsistency === undefined) {
      // No caller waits for the token: the write answers now, and its scope reads from the primary until
      // the position is known (for good, if it cannot be read, until a later write's is).
      token.catch(() => {})
      return result
    }
    onConsistency(await token)
    return result
  }
  // With changes on, every order read has the ledger, orders stored before they were on included;
  // with them off, an order keeps the ledger it was given while they were on.
  const read: (order: Order) => Order = changes === undefined ? withoutEmptyLedger : withLedger

  /** What a guard sees of a move of `order` to `to`: frozen, so it cannot change what is stored next. */
  function moveOf (order: Order, to: string, { reason, customFields }: UpdateOrderStatusInput & { customFields?: CustomFieldValues }, scope: OrderScope | undefined): TransitionMove {
    const move: { -readonly [K in keyof TransitionMove]: TransitionMove[K] } = { order: freeze(order), from: order.status, to }
    if (reason !== undefined) move.reason = reason
    if (customFields !== undefined) {
      fields.freeze({ customFields, items: [] })
      move.customFields = customFields as never
    }
    if (scope !== undefined) move.scope = Object.freeze({ ...scope })
    return Object.freeze(move)
  }

  async function create (input: CreateOrderInput, options: OrderCallOptions = {}) {
    const { scope, idempotencyKey } = options
    if (idempotencyKey !== undefined) checkIdempotencyKey(idempotencyKey)
    const now = Date.now()
    const order = newOrderOf(input, scope, workflow.initial, now, changes !== undefined)
    fields.fill(order, input)
    const claim = idempotencyKey === undefined
      ? undefined
      : claimOf(idempotencyKey, scope, fingerprintOf(input, fields.fingerprint(input)),
        new Date(now + idempotencyTtl).toISOString())
    const event = createdEvent(order)
    const result = await storage.create(order, event, claim)
    if (result.created) {
      // A literal: a spread of the event would take V8's slow path for copying an object.
      const following = changed({ id: event.id, type: 'created', at: event.at, order: result.order })
      if (following !== undefined) await following
      return committed({ order: result.order, replayed: false }, options)
    }
    // The reference is not in the message: Fastify logs it, and a log line carries no client text.
    if ('referenceTaken' in result) throw new codes.ORDER_REFERENCE_TAKEN()
    return committed({ order: read(replayOf(result, claim!)), replayed: true }, options)
  }

  async function list (query: ListOrdersQuery, { scope, consistency, primary }: OrderCallOptions = {}): Promise<OrderPage> {
    const { filter, order, after: cursor, limit } = readListQuery(query, defaultLimit)
    const floor = floors?.floorsOf(scope, consistency)
    let after = cursor
    if (cursor?.view !== undefined) {
      // A view only a storage with replicas gives: elsewhere the cursor is only a position.
      const { view, ...position } = cursor
      after = position
      if (reads !== undefined && !reads.wellFormed(view)) throw new codes.ORDER_INVALID_CURSOR()
      floor?.atLeast.push(view)
    }
    // One order more than the page, to know whether another page follows.
    const page: StorageListQuery = Object.assign({ order, after, limit: limit + 1 }, filter)
    // The scope is a filter the caller cannot widen: one naming another customer or store finds nothing.
    for (const key of SCOPED) {
      if (scope?.[key] === undefined) continue
      if (filter[key] !== undefined && filter[key] !== scope[key]) return { items: [], nextCursor: null }
      page[key] = scope[key]
    }
    let stored: Order[]
    let view: string | undefined
    if (floor === undefined) stored = await storage.list(page)
    else ({ orders: stored, position: view } = await reads!.list(page, { atLeast: floor.atLeast, primary: primary === true || floor.primary }))
    const items = stored.map(read)
    if (items.length <= limit) return { items, nextCursor: null }
    items.length = limit
    return { items, nextCursor: encodeCursor(items[limit - 1]!, order, filter, view) }
  }

  /**
   * Decides a write on the order as stored and stores it by compare-and-set, after scope and the
   * version check: a lost race is decided again on the order as now stored (guards re-run) until it
   * applies or is refused, unless the caller pinned the version. Each lost race is another writer's
   * progress; a write the storage refused while the order stayed at its version (a claim in flight,
   * or a storage that cannot see the order move) is refused rather than retried for ever.
   */
  async function replaced (
    id: string, expectedVersion: number | undefined, { scope, found }: OrderCallOptions,
    decide: (current: Order) => Promise<Decision>, claim?: IdempotencyClaim
  ): Promise<{ order: Order, replayed: boolean }> {
    let lostAt: number | undefined
    for (;;) {
      const stored = await storage.get(id)
      if (stored === undefined || !inScope(stored, scope)) throw new codes.ORDER_NOT_FOUND(id)
      found?.(stored)
      const current = read(stored)
      if (expectedVersion !== undefined && current.version !== expectedVersion) {
        throw new codes.ORDER_VERSION_CONFLICT(id, expectedVersion)
      }
      if (current.version === lostAt) throw claim === undefined ? new codes.ORDER_VERSION_CONFLICT(id, lostAt) : new codes.ORDER_IDEMPOTENCY_IN_PROGRESS()
      const decision = await decide(current)
      if ('answer' in decision) return { order: decision.answer, replayed: false }
      if (await storage.replace(decision.next, current.version, decision.event, claim)) {
        const following = changed(decision.event)
        if (following !== undefined) await following
        return { order: decision.next, replayed: false }
      }
      // Another call with the same key may have stored its change first: its answer is this one's.
      const replay = claim === undefined ? undefined : await replayedChange(claim)
      if (replay !== undefined) return { order: replay, replayed: true }
      if (expectedVersion !== undefined) throw new codes.ORDER_VERSION_CONFLICT(id, expectedVersion)
      lostAt = current.version
    }
  }

  /** A write through `replaced`, its token handed on once it stored (or answered). */
  async function replacedThen (...args: Parameters<typeof replaced>): Promise<{ order: Order, replayed: boolean }> {
    return committed(await replaced(...args), args[2])
  }

  /** The order as the first change with this claim's key left it, ORDER_IDEMPOTENCY_KEY_REUSED for another body, or undefined. */
  async function replayedChange (claim: IdempotencyClaim): Promise<Order | undefined> {
    const live = await storage.readChangeClaim!(claim.key, new Date().toISOString())
    if (live === undefined) return undefined
    if (live.fingerprint !== claim.fingerprint) throw new codes.ORDER_IDEMPOTENCY_KEY_REUSED()
    return live.order
  }

  async function updateStatus (input: UpdateOrderStatusInput, options: OrderCallOptions = {}): Promise<Order> {
    const { id, status, expectedVersion, reason } = input
    const { scope } = options
    const { order } = await replacedThen(id, expectedVersion, options, async current => {
      // Custom fields change only with a move: a same-status patch that would change them is refused.
      const customFields = fields.patched(current, input)
      if (current.status === status) {
        if (customFields !== undefined) throw new codes.ORDER_INVALID_TRANSITION(current.status, status, `custom fields change only with a move, and ${workflow.whereFrom(current.status)}`)
        return { answer: current }
      }
      if (!workflow.allows(current.status, status)) {
        throw new codes.ORDER_INVALID_TRANSITION(current.status, status, workflow.whereFrom(current.status))
      }
      fields.check(customFields)
      // Decided on this version: the compare-and-set stores the move only if the order is still at it.
      const guard = workflow.guardOf(status)
      if (guard !== undefined) await runGuard(guard, moveOf(current, status, input, scope))
      const at = changedAt(current)
      // A move that cancels the order cancels what is still open on its lines, in the same step.
      const cancelling = changes?.cancelling.includes(status) === true
      const moving = cancelling ? cancelledAll(current as OrderWithChanges, { at, by: scope?.actor, reason }) : current
      const next = movedOrder(moving, status, at, reason, scope, customFields)
      return { next, event: statusChangedEvent(next, current.status) }
    })
    return order
  }

  async function change (input: ChangeOrderInput, options: OrderCallOptions = {}): Promise<{ order: OrderWithChanges, replayed: boolean }> {
    const settings = changes!
    const { scope, idempotencyKey } = options
    // Money and prices are the shop's: a customer uses only the actions the host lets customers use.
    if (scope?.customerId !== undefined) {
      const barred = input.actions.find(({ type }) => !settings.customerActions.has(type))
      if (barred !== undefined) throw new codes.ORDER_FORBIDDEN(`${barred.type}: customers may not ${barred.type} (changes.customerActions)`)
    }
    if (idempotencyKey !== undefined) checkIdempotencyKey(idempotencyKey)
    // A line added without custom fields gets {}, as a created one does, before the fingerprint is taken.
    fields.fillItems(input.actions.flatMap(action => action.type === 'addItem' ? [action.item] : []))
    const preview = input.preview === true
    // A preview stores nothing, its key included.
    const claim = idempotencyKey === undefined || preview
      ? undefined
      : claimOf(idempotencyKey, scope, changeFingerprintOf(input), new Date(Date.now() + idempotencyTtl).toISOString(), 'change')
    // A replay answers as the first call did, even when the order moved on since.
    const replay = claim === undefined ? undefined : await replayedChange(claim)
    if (replay !== undefined) return committed({ order: replay as OrderWithChanges, replayed: true }, options)
    const { order, replayed } = await replacedThen(input.id, input.expectedVersion, options, async current => {
      const stored = current as OrderWithChanges
      const { after, applied } = applyChange(stored, input.actions, settings, { at: changedAt(current), by: scope?.actor, reason: input.reason })
      if (applied.length === 0) return { answer: current }
      // Decided on this version: the compare-and-set stores the change only if the order is still at it.
      if (settings.guard !== undefined) await runChangeGuard(settings.guard, proposalOf(stored, input, after, scope))
      if (preview) return { answer: after }
      return { next: after, event: changedEvent(after, after.changes.at(-1)!) }
    }, claim)
    return { order: order as OrderWithChanges, replayed }
  }

  /** What the change guard sees: frozen, so it cannot change what is stored next. */
  function proposalOf (order: OrderWithChanges, { actions }: ChangeOrderInput, after: OrderWithChanges, scope: OrderScope | undefined): OrderChangeProposal {
    const proposal: { -readonly [K in keyof OrderChangeProposal]: OrderChangeProposal[K] } = {
      order: freeze(order) as OrderWithChanges,
      actions: Object.freeze(actions),
      after: freeze(after) as OrderWithChanges
    }
    if (scope !== undefined) proposal.scope = Object.freeze({ ...scope })
    return Object.freeze(proposal)
  }

  return { create, list, updateStatus, change }
}
