// The workflow explained: a Mermaid diagram of it, and its moves in words for OpenAPI.
import { compileWorkflow, listed, type CompiledWorkflow, type Workflow } from './workflow.js'

// Mermaid reads a plain word as a state's id; any other status name gets an id and the name as its label.
const PLAIN_ID = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * The workflow as Mermaid `stateDiagram-v2` text: an arrow from the start to the initial status, one
 * per move, and one from each final status to the end. ORDER_INVALID_OPTIONS for a workflow that
 * `register` would refuse.
 */
export function workflowDiagram (workflow: Workflow): string {
  const compiled = compileWorkflow(workflow)
  const lines = ['stateDiagram-v2']
  const ids = new Map(compiled.statuses.map((status, index) => [status, PLAIN_ID.test(status) ? status : `status_${index}`]))
  for (const [status, id] of ids) if (id !== status) lines.push(`  state "${status}" as ${id}`)
  lines.push(`  [*] --> ${ids.get(compiled.initial)!}`)
  for (const from of compiled.statuses) {
    const targets = compiled.targetsOf(from)
    for (const to of targets) lines.push(`  ${ids.get(from)!} --> ${ids.get(to)!}`)
    if (targets.length === 0) lines.push(`  ${ids.get(from)!} --> [*]`)
  }
  return `${lines.join('\n')}\n`
}

/** The moves of the workflow in words, for the OpenAPI description of updateOrderStatus. */
export function movesDescription (workflow: CompiledWorkflow): string {
  const lines = [`The moves of this workflow (new orders start ${workflow.initial}):`]
  for (const from of workflow.statuses) {
    const targets = workflow.targetsOf(from)
    lines.push(targets.length === 0 ? `- ${from}: final` : `- ${from} → ${listed(targets)}`)
  }
  const guarded = workflow.statuses.filter(status => workflow.guardOf(status) !== undefined)
  if (guarded.length > 0) lines.push('', `A move to ${listed(guarded)} is also checked by a guard of this server, on the order as stored: 409 ORDER_TRANSITION_REFUSED when it refuses.`)
  return lines.join('\n')
}
