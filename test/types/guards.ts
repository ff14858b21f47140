// Type tests of guards: keyed and typed by the statuses of a workflow declared `as const`. Compile-time
// assertions (expect-type), checked with the rest of the code by `npm run typecheck` (tsc --noEmit); never run.
// Each `// @ts-expect-error` covers the one line after it: that line must not compile, for the reason given.
import Fastify from 'fastify'
import { expectTypeOf } from 'expect-type'
import orderPlugin, {
  defaultWorkflow, workflowDiagram, type GuardDecision, type Order, type OrderScope, type StatusOf, type TransitionGuard,
  type TransitionMove, type Workflow, type WorkflowGuards
} from '../../lib/index.js'

const shop = { initial: 'new', transitions: { new: ['paid', 'void'], paid: ['shipped'], shipped: [], void: [] } } as const
const app = Fastify()

// the statuses of a workflow declared as const are its keys
expectTypeOf<StatusOf<typeof shop>>().toEqualTypeOf<'new' | 'paid' | 'shipped' | 'void'>()
expectTypeOf<StatusOf<typeof defaultWorkflow>>().toEqualTypeOf<'pending' | 'paid' | 'shipped' | 'delivered' | 'cancelled' | 'refunded'>()

// guards are keyed by the workflow's statuses; a key it does not have does not compile
expectTypeOf({ shipped: () => true, void: async () => 'not now' }).toExtend<WorkflowGuards<typeof shop>>()
expectTypeOf({ dispatched: () => true }).not.toExtend<WorkflowGuards<typeof shop>>()
expectTypeOf({ shiped: () => false }).not.toExtend<WorkflowGuards<typeof defaultWorkflow>>()
expectTypeOf({ shipped: () => 42 }).not.toExtend<WorkflowGuards<typeof shop>>()

// a guard's move is typed: to is its key, from the statuses with a move to it, the order as stored
const guards: WorkflowGuards<typeof shop> = {
  shipped: move => {
    expectTypeOf(move.to).toEqualTypeOf<'shipped'>()
    expectTypeOf(move.from).toEqualTypeOf<'paid'>()
    expectTypeOf(move.order).toEqualTypeOf<Order>()
    expectTypeOf(move.reason).toEqualTypeOf<string | undefined>()
    expectTypeOf(move.scope).toEqualTypeOf<OrderScope | undefined>()
    return move.order.total > 0
  },
  paid: ({ from }) => {
    expectTypeOf(from).toEqualTypeOf<'new'>()
  }
}
app.register(orderPlugin, { workflow: { ...shop, guards } })

// guards written inline in the option are plain-string guards; a workflow typed with its statuses checks their keys
app.register(orderPlugin, { workflow: { ...defaultWorkflow, guards: { shipped: ({ order }) => order.version > 1 || 'pay first' } } })
const typed = (workflow: Workflow<'new' | 'done'>) => workflow
// @ts-expect-error 'gone' is not a status of the workflow
expectTypeOf(typed).toBeCallableWith({ initial: 'new', transitions: { new: ['done'], done: [] }, guards: { gone: () => true } })
expectTypeOf(typed).toBeCallableWith({ initial: 'new', transitions: { new: ['done'], done: [] }, guards: { done: () => true } })
app.register(orderPlugin, { workflow: typed({ initial: 'new', transitions: { new: ['done'], done: [] } }) })
expectTypeOf(async (move: TransitionMove) => move.to === 'paid').toExtend<TransitionGuard>()
expectTypeOf(42).not.toExtend<GuardDecision>()

// workflowDiagram takes a workflow and returns its Mermaid text
expectTypeOf(workflowDiagram(shop)).toEqualTypeOf<string>()
// @ts-expect-error a workflow needs its transitions
expectTypeOf(workflowDiagram).toBeCallableWith({ initial: 'new' })
