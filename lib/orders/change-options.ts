// The `changes` option: checked at register, its defaults filled from the workflow, and its guard, run before a change is written.
import type { ChangeAction, OrderWithChanges } from '../http/schemas.js'
import type { OptionChecker } from '../option-checks.js'
import type { ChangeRules } from './changes.js'
import { refusalOf, type GuardDecision } from './guards.js'
import type { StatusOf } from './statuses.js'
import type { OrderScope } from './scope.js'
import { codes } from '../errors.js'
import { change as limits } from '../limits.js'
import type { CompiledWorkflow } from './workflow.js'

/** The change a change guard decides on. Everything in it is frozen. */
export interface OrderChangeProposal {
  /** The order as stored, at the version the change is stored on if the guard allows it. */
  readonly order: OrderWithChanges
  /** The actions as given. */
  readonly actions: readonly ChangeAction[]
  /** The order as the change would leave it. */
  readonly after: OrderWithChanges
  /** The caller's scope: what `authorize` gave, or the `scope` option of app.orders. */
  readonly scope?: OrderScope
}

/**
 * Decides whether an order may take a change: `(change) => true | void | false | string`, sync or
 * async, as a workflow guard. An error it throws passes through unchanged.
 */
export type ChangeGuard = {
  guard (change: OrderChangeProposal): GuardDecision | Promise<GuardDecision>
}['guard']

/**
 * The `changes` option as an object. For a workflow declared `as const` (`ChangesOptions<typeof
 * workflow>`), a status it does not have in `lineEdits` or `returns` does not compile.
 */
export interface ChangesOptions<W extends { readonly transitions: object } = { readonly transitions: Record<string, readonly string[]> }> {
  /** Also serve `POST /order/changeOrder` (authorize operation 'changeOrder'). Default: false. */
  route?: boolean
  /** Statuses in which lines may be added, requantified, repriced or cancelled. Default: those of pending and paid the workflow has, else its initial status. */
  lineEdits?: ReadonlyArray<StatusOf<W>>
  /** Statuses in which quantities may be returned. Default: those of shipped and delivered the workflow has, else none. */
  returns?: ReadonlyArray<StatusOf<W>>
  /** Refuses a change for this order before anything is written. */
  guard?: ChangeGuard
  /**
   * The actions a caller whose scope names a `customerId` may use; any other is 403 ORDER_FORBIDDEN.
   * Staff (no customerId in scope) may use all. Default: none.
   */
  customerActions?: ReadonlyArray<ChangeAction['type']>
  /** Entries an order's `changes` may hold; the change that would pass it is refused. Default: 100. */
  maxChanges?: number
  /** Entries an order's `payments` may hold (payments and refunds); the change that would pass it is refused. Default: 100. */
  maxPayments?: number
  /**
   * Statuses whose move cancels every open quantity in the same step, recorded as one change.
   * Default: `cancelled`, when the workflow has it.
   */
  cancelling?: ReadonlyArray<StatusOf<W>>
}

/** The `changes` option checked, with its defaults. */
export interface ChangesConfig extends ChangeRules {
  route: boolean
  guard: ChangeGuard | undefined
  /** The action types a customer-scoped caller may use. */
  customerActions: ReadonlySet<string>
  /** Statuses whose move cancels every open quantity. */
  cancelling: readonly string[]
}

const NAMES = ['route', 'lineEdits', 'returns', 'guard', 'customerActions', 'maxChanges', 'maxPayments', 'cancelling']
const ACTION_TYPES = ['addItem', 'setQuantity', 'setUnitPrice', 'cancelItem', 'returnItem', 'recordPayment', 'recordRefund']

/** `changes.customerActions`: action types, none by default. */
function actionTypesOf (value: unknown, check: OptionChecker): ReadonlySet<string> {
  if (value === undefined) return new Set()
  const rule = `changes.customerActions must be an array of action types (${ACTION_TYPES.join(', ')})`
  if (!Array.isArray(value)) throw check.invalid(`${rule}, got ${JSON.stringify(value)}`)
  const unknown = value.find(type => !ACTION_TYPES.includes(type))
  if (unknown !== undefined) throw check.invalid(`${rule}; ${JSON.stringify(unknown)} is not one`)
  return new Set(value as string[])
}

/** The option's statuses, each a status of the workflow; `fallback` when absent. */
function statusesOf (options: Record<string, unknown>, name: string, workflow: CompiledWorkflow, fallback: readonly string[], check: OptionChecker): readonly string[] {
  const value = options[name]
  if (value === undefined) return fallback
  const rule = `changes.${name} must be an array of statuses of the workflow (${workflow.statuses.join(', ')})`
  if (!Array.isArray(value)) throw check.invalid(`${rule}, got ${JSON.stringify(value)}`)
  const unknown = value.find(status => typeof status !== 'string' || !workflow.statuses.includes(status))
  if (unknown !== undefined) throw check.invalid(`${rule}; ${JSON.stringify(unknown)} is not one`)
  return [...new Set(value as string[])]
}

/** Checks the `changes` option (`true` or an object); undefined when it is off. */
export function checkChanges (value: unknown, workflow: CompiledWorkflow, maxItems: number, check: OptionChecker): ChangesConfig | undefined {
  if (value === undefined || value === false) return undefined
  if (value !== true && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw check.invalid(`changes must be true or an object like { route: true }, got ${JSON.stringify(value)}`)
  }
  const options = value === true ? {} : value as Record<string, unknown>
  const unknown = Object.keys(options).find(name => !NAMES.includes(name))
  if (unknown !== undefined) throw check.invalid(`unknown option "changes.${unknown}"; the options of changes are ${NAMES.join(', ')}`)
  const has = (statuses: readonly string[]) => statuses.filter(status => workflow.statuses.includes(status))
  const editable = has(['pending', 'paid'])
  const route = options.route ?? false
  if (typeof route !== 'boolean') throw check.invalid(`changes.route must be true or false, got ${JSON.stringify(route)}`)
  const ledgerLimit = (name: string, fallback: number) =>
    check.integer({ [`changes.${name}`]: options[name] }, `changes.${name}`, { fallback, max: limits.maxLedgerEntries })
  return {
    route,
    lineEdits: statusesOf(options, 'lineEdits', workflow, editable.length > 0 ? editable : [workflow.initial], check),
    returns: statusesOf(options, 'returns', workflow, has(['shipped', 'delivered']), check),
    cancelling: statusesOf(options, 'cancelling', workflow, has(['cancelled']), check),
    customerActions: actionTypesOf(options.customerActions, check),
    maxItems,
    maxChanges: ledgerLimit('maxChanges', limits.defaultMaxChanges),
    maxPayments: ledgerLimit('maxPayments', limits.defaultMaxPayments),
    guard: check.func<ChangeGuard>({ 'changes.guard': options.guard }, 'changes.guard', '(change) => true | false | "why not", sync or async')
  }
}

/** Runs the change guard and throws ORDER_CHANGE_REFUSED when it refuses: with its message, or a generic one. */
export async function runChangeGuard (guard: ChangeGuard, change: OrderChangeProposal): Promise<void> {
  const refusal = refusalOf(await guard(change), `This change of order "${change.order.id}" is refused`)
  if (refusal !== undefined) throw new codes.ORDER_CHANGE_REFUSED(refusal)
}
