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
    expectTypeOf(move.order).toExtend<Order>()
    expectTypeOf(move.reason).toEqualTypeOf<string | undefined>()
    expectTypeOf(move.scope).toEqualTypeOf<OrderScope | undefined>()
    return move.order.total > 0
  },
  paid: ({ from }) => {
    expectTypeOf(from).toEqualTypeOf<'new'>()
  }
}

// the order a guard sees is at the move's from, and its history holds the workflow's statuses: a typo does not compile
const typedGuards: WorkflowGuards<typeof shop> = {
  shipped: ({ order }) => {
    expectTypeOf(order.status).toEqualTypeOf<'paid'>()
    expectTypeOf<typeof order.statusHistory[number]['status']>().toEqualTypeOf<'new' | 'paid' | 'shipped' | 'void'>()
    // @ts-expect-error 'payed' is not a status of the workflow
    return order.statusHistory.some(({ status }) => status === 'payed')
  },
  void: ({ order }) => {
    // @ts-expect-error an order voided is new: it is never paid when the guard runs
    return order.status === 'paid'
  }
}
app.register(orderPlugin, { workflow: { ...shop, guards: typedGuards } })
const defaultGuards: WorkflowGuards<typeof defaultWorkflow> = {
  // @ts-expect-error 'payed' is not a status of the default workflow
  shipped: ({ order }) => order.statusHistory.some(({ status }) => status === 'payed'),
  refunded: ({ order }) => {
    expectTypeOf(order.status).toEqualTypeOf<'paid' | 'shipped' | 'delivered'>()
    return order.statusHistory.some(({ status }) => status === 'paid')
  }
}
app.register(orderPlugin, { workflow: { ...defaultWorkflow, guards: defaultGuards } })

// a workflow not declared as const keeps string statuses: its guards compare with any string
const loose: Workflow = { initial: 'new', transitions: { new: ['done'], done: [] } }
const looseGuards: WorkflowGuards<typeof loose> = {
  done: ({ order }) => {
    expectTypeOf(order.status).toEqualTypeOf<string>()
    return order.statusHistory.some(({ status }) => status === 'payed')
  }
}
expectTypeOf<StatusOf<typeof loose>>().toEqualTypeOf<string>()
app.register(orderPlugin, { workflow: { ...loose, guards: looseGuards } })
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
