// The order status state machine: the default workflow, its validation and the transition check.
import { codes } from '../errors.js'
import { workflow as limits } from '../limits.js'
import { optionChecker } from '../option-checks.js'

/** A status workflow: the status new orders start in, and the moves allowed from each status. */
export interface Workflow {
  readonly initial: string
  /** Every status is a key; its value lists the statuses an order may move to from it. */
  readonly transitions: Readonly<Record<string, readonly string[]>>
}

export const defaultWorkflow = Object.freeze({
  initial: 'pending',
  transitions: Object.freeze({
    pending: Object.freeze(['paid', 'cancelled']),
    paid: Object.freeze(['shipped', 'cancelled', 'refunded']),
    shipped: Object.freeze(['delivered', 'refunded']),
    delivered: Object.freeze(['refunded']),
    cancelled: Object.freeze([]),
    refunded: Object.freeze([])
  })
}) satisfies Workflow

/** A validated workflow with a constant-time transition check. */
export interface CompiledWorkflow {
  readonly initial: string
  readonly statuses: readonly string[]
  allows (from: string, to: string): boolean
}

const STATUS_NAME = new RegExp(`^[A-Za-z0-9_.-]{1,${limits.statusLength}}$`)
const { invalid } = optionChecker('workflow', codes.ORDER_INVALID_OPTIONS)

/** Checks a workflow option and compiles it; the error says what to change. */
export function compileWorkflow (workflow: unknown): CompiledWorkflow {
  if (typeof workflow !== 'object' || workflow === null) {
    throw invalid(' must be an object like { initial: "new", transitions: { new: ["done"], done: [] } }')
  }
  const { initial, transitions } = workflow as Partial<Workflow>
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
  return {
    initial,
    statuses,
    allows: (from, to) => moves.get(from)?.has(to) === true
  }
}
