// Guards of the workflow: the host's rules on whether this order may make a move, decided before anything is written.
import { codes } from '../errors.js'
import type { Order, StatusChange, UpdateOrderStatusInput } from '../http/schemas.js'
import type { OrderScope } from './scope.js'
import type { OrderStatus, StatusOf } from './statuses.js'

/** What a guard answers: `true` or nothing allows the move; `false` or a message for the caller refuses it. */
export type GuardDecision = boolean | string | undefined | void

/** The custom fields patch an updateOrderStatus carries, typed as the host declared its custom fields (if it did). */
type CustomFieldsPatchOf<I> = 'customFields' extends keyof I ? I['customFields' & keyof I] : Readonly<Record<string, unknown>>

/**
 * The order a guard of a typed workflow sees: at status `From`, with the workflow's statuses `S` in
 * its history, so a comparison with a status the workflow does not have does not compile.
 */
type OrderAt<From extends string, S extends string> = Omit<Order, 'status' | 'statusHistory'> & {
  status: From
  statusHistory: Array<Omit<StatusChange, 'status'> & { status: S }>
}

/**
 * The move a guard decides on, in a workflow whose statuses are `S` (by default those declared in
 * `OrderStatuses`, or strings). Everything in it is frozen.
 */
export interface TransitionMove<From extends string = OrderStatus, To extends string = OrderStatus, S extends string = OrderStatus> {
  /** The order as stored, at the version the move is stored on if the guard allows it. */
  readonly order: OrderAt<From, S>
  readonly from: From
  readonly to: To
  readonly reason?: string
  /** The custom fields patch the request carries, when it carries one. */
  readonly customFields?: CustomFieldsPatchOf<UpdateOrderStatusInput>
  /** The caller's scope: what `authorize` gave, or the `scope` option of app.orders. */
  readonly scope?: OrderScope
}

/**
 * Decides whether an order may make a move: `(move) => true | void | false | string`, sync or async.
 * An error it throws passes through unchanged. (A method type, so a guard typed for the statuses of
 * one workflow is also a guard of a workflow typed with plain strings.)
 */
export type TransitionGuard<From extends string = OrderStatus, To extends string = OrderStatus, S extends string = OrderStatus> = {
  guard (move: TransitionMove<From, To, S>): GuardDecision | Promise<GuardDecision>
}['guard']

type TransitionsOf<W> = W extends { readonly transitions: infer T } ? T : never
/** The statuses of `W` with a move to `To`. */
type FromOf<W extends { readonly transitions: object }, To extends string> = {
  [From in StatusOf<W>]: TransitionsOf<W>[From & keyof TransitionsOf<W>] extends ReadonlyArray<infer Target> ? (To extends Target ? From : never) : never
}[StatusOf<W>]

/**
 * The guards of workflow `W`, keyed by the status a move goes to. For a workflow declared `as const`,
 * a key that is not one of its statuses does not compile, and each guard's `from` and `to`, the order's
 * status and those of its history are its statuses.
 */
export type WorkflowGuards<W extends { readonly transitions: object }> = {
  readonly [To in StatusOf<W>]?: TransitionGuard<FromOf<W, To>, To, StatusOf<W>>
}

/** The check at register: `guards` keyed by statuses of the workflow, each a function. */
export function checkGuards (guards: unknown, statuses: readonly string[], invalid: (message: string) => Error): ReadonlyMap<string, TransitionGuard> {
  const checked = new Map<string, TransitionGuard>()
  if (guards === undefined) return checked
  if (typeof guards !== 'object' || guards === null || Array.isArray(guards)) {
    throw invalid('.guards must be an object keyed by the status a move goes to, like { shipped: ({ order }) => true | false | "why not" }')
  }
  for (const [status, guard] of Object.entries(guards)) {
    if (!statuses.includes(status)) {
      throw invalid(`.guards.${status}: "${status}" is not a status of workflow.transitions (${statuses.join(', ')}); a guard is keyed by the status a move goes to`)
    }
    if (guard === undefined) continue
    if (typeof guard !== 'function') throw invalid(`.guards.${status} must be a function (move) => true | false | "why not", sync or async`)
    checked.set(status, guard as TransitionGuard)
  }
  return checked
}

/**
 * Runs `guard` on the move and throws ORDER_TRANSITION_REFUSED when it refuses: with its message, or
 * a generic one. Anything but `true` or nothing refuses, so a guard that returns what it did not mean
 * (a number, null, an object) never lets a move through.
 */
export async function runGuard (guard: TransitionGuard, move: TransitionMove): Promise<void> {
  const refusal = refusalOf(await guard(move), `This order may not move from "${move.from}" to "${move.to}" now`)
  if (refusal !== undefined) throw new codes.ORDER_TRANSITION_REFUSED(refusal)
}

/** What a guard's decision refuses with: undefined when it allows (`true` or nothing), its message, or `generic`. */
export function refusalOf (decision: unknown, generic: string): string | undefined {
  if (decision === true || decision === undefined) return undefined
  return typeof decision === 'string' && decision !== '' ? decision : generic
}
