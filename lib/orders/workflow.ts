// The order status state machine: its validation, the transition check, the guards and where an order may go.
import { codes } from '../errors.js'
import { workflow as limits } from '../limits.js'
import { optionChecker } from '../option-checks.js'
import { checkGuards, type TransitionGuard } from './guards.js'

export { defaultWorkflow } from './default-workflow.js'

/**
 * A status workflow: the status new orders start in, the moves allowed from each status, and guards
 * on moves. `S` is the union of its statuses, for a workflow typed with them (`Workflow<'new' | 'done'>`).
 */
export interface Workflow<S extends string = string> {
  readonly initial: S
  /** Every status is a key; its value lists the statuses an order may move to from it. */
  readonly transitions: { readonly [From in S]: readonly S[] }
  /** Keyed by the status a move goes to: decides, on the order as stored, whether it may make the move. */
  readonly guards?: { readonly [To in S]?: TransitionGuard<S, To, S> }
}

/** A validated workflow with a constant-time transition check. */
export interface CompiledWorkflow {
  readonly initial: string
  readonly statuses: readonly string[]
  allows (from: string, to: string): boolean
  /** The statuses an order may move to from `from`, a status of the workflow, in the workflow's order. */
  targetsOf (from: string): readonly string[]
  /** Where an order may go from `from`, in words: 'from "paid" an order may move to shipped or refunded'. */
  whereFrom (from: string): string
  /** The guard of moves to `to`, if the workflow has one. */
  guardOf (to: string): TransitionGuard | undefined
}

/** "a", "a or b", "a, b or c". */
export function listed (names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)!}`
}

const STATUS_NAME = new RegExp(`^[A-Za-z0-9_.-]{1,${limits.statusLength}}$`)
const { invalid } = optionChecker('workflow', codes.ORDER_INVALID_OPTIONS)
const WORKFLOW_KEYS = ['initial', 'transitions', 'guards']

/** Checks a workflow option and compiles it; the error says what to change. */
export function compileWorkflow (workflow: unknown): CompiledWorkflow {
  if (typeof workflow !== 'object' || workflow === null) {
    throw invalid(' must be an object like { initial: "new", transitions: { new: ["done"], done: [] } }')
  }
  // A misspelt key (`guard` for `guards`) would otherwise turn a business rule off without a word.
  const unknown = Object.keys(workflow).find(key => !WORKFLOW_KEYS.includes(key))
  if (unknown !== undefined) throw invalid(` has no key "${unknown}"; the keys of a workflow are ${WORKFLOW_KEYS.join(', ')}`)
  const { initial, transitions, guards } = workflow as Partial<Workflow>
  if (typeof transitions !== 'object' || transitions === null || Array.isArray(transitions)) {
    throw invalid('.transitions must be an object mapping every status to the statuses it may move to')
  }
  const statuses = Object.keys(transitions)
  if (statuses.length === 0) throw invalid('.transitions must list at least one status')
  for (const status of statuses) {
    if (!STATUS_NAME.test(status)) {
      throw invalid(` status "${status}" must be 1 to ${limits.statusLength} letters, digits, "_", "." or "-"`)
    }
  }
  if (typeof initial !== 'string' || !Object.hasOwn(transitions, initial)) {
    throw invalid(`.initial ${JSON.stringify(initial)} is not a status of workflow.transitions (${statuses.join(', ')}); add it to transitions or pick one of them`)
  }
  const moves = new Map<string, Set<string>>()
  for (const from of statuses) {
    const targets = transitions[from]
    if (!Array.isArray(targets)) {
      throw invalid(`.transitions.${from} must be an array of statuses (use [] for a final status)`)
    }
    for (const to of targets) {
      if (typeof to !== 'string' || !Object.hasOwn(transitions, to)) {
        throw invalid(`.transitions.${from} moves to ${JSON.stringify(to)}, which is not a status; add it to workflow.transitions or fix the name`)
      }
    }
    moves.set(from, new Set(targets))
  }
  const guardOf = checkGuards(guards, statuses, invalid)
  const whereFrom = new Map(statuses.map(from => [from, moves.get(from)!.size === 0
    ? `from "${from}" an order may move nowhere: ${from} is final`
    : `from "${from}" an order may move to ${listed([...moves.get(from)!])}`]))
  return {
    initial,
    statuses,
    allows: (from, to) => moves.get(from)?.has(to) === true,
    targetsOf: from => [...moves.get(from)!],
    whereFrom: from => whereFrom.get(from) ?? `"${from}" is not a status of the workflow`,
    guardOf: to => guardOf.get(to)
  }
}
