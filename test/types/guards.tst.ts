// Type tests of guards: keyed and typed by the statuses of a workflow declared `as const`.
import Fastify from 'fastify'
import { expect, test } from 'tstyche'
import orderPlugin, {
  defaultWorkflow, workflowDiagram, type GuardDecision, type Order, type OrderScope, type StatusOf, type TransitionGuard,
  type TransitionMove, type Workflow, type WorkflowGuards
} from '../../lib/index.js'

const shop = { initial: 'new', transitions: { new: ['paid', 'void'], paid: ['shipped'], shipped: [], void: [] } } as const
const app = Fastify()

test('the statuses of a workflow declared as const are its keys', () => {
  expect<StatusOf<typeof shop>>().type.toBe<'new' | 'paid' | 'shipped' | 'void'>()
  expect<StatusOf<typeof defaultWorkflow>>().type.toBe<'pending' | 'paid' | 'shipped' | 'delivered' | 'cancelled' | 'refunded'>()
})

test('guards are keyed by the workflow\'s statuses; a key it does not have does not compile', () => {
  expect<WorkflowGuards<typeof shop>>().type.toBeAssignableFrom({ shipped: () => true, void: async () => 'not now' })
  expect<WorkflowGuards<typeof shop>>().type.not.toBeAssignableFrom({ dispatched: () => true })
  expect<WorkflowGuards<typeof defaultWorkflow>>().type.not.toBeAssignableFrom({ shiped: () => false })
  expect<WorkflowGuards<typeof shop>>().type.not.toBeAssignableFrom({ shipped: () => 42 })
})

test('a guard\'s move is typed: to is its key, from the statuses with a move to it, the order as stored', () => {
  const guards: WorkflowGuards<typeof shop> = {
    shipped: move => {
      expect(move.to).type.toBe<'shipped'>()
      expect(move.from).type.toBe<'paid'>()
      expect(move.order).type.toBe<Order>()
      expect(move.reason).type.toBe<string | undefined>()
      expect(move.scope).type.toBe<OrderScope | undefined>()
      return move.order.total > 0
    },
    paid: ({ from }) => {
      expect(from).type.toBe<'new'>()
    }
  }
  expect(app.register(orderPlugin, { workflow: { ...shop, guards } })).type.not.toRaiseError()
})

test('guards written inline in the option are plain-string guards; a workflow typed with its statuses checks their keys', () => {
  expect(app.register(orderPlugin, { workflow: { ...defaultWorkflow, guards: { shipped: ({ order }) => order.version > 1 || 'pay first' } } })).type.not.toRaiseError()
  const typed = (workflow: Workflow<'new' | 'done'>) => workflow
  expect(typed).type.not.toBeCallableWith({ initial: 'new', transitions: { new: ['done'], done: [] }, guards: { gone: () => true } })
  expect(typed).type.toBeCallableWith({ initial: 'new', transitions: { new: ['done'], done: [] }, guards: { done: () => true } })
  expect(app.register(orderPlugin, { workflow: typed({ initial: 'new', transitions: { new: ['done'], done: [] } }) })).type.not.toRaiseError()
  expect<TransitionGuard>().type.toBeAssignableFrom(async (move: TransitionMove) => move.to === 'paid')
  expect<GuardDecision>().type.not.toBeAssignableFrom(42)
})

test('workflowDiagram takes a workflow and returns its Mermaid text', () => {
  expect(workflowDiagram(shop)).type.toBe<string>()
  expect(workflowDiagram).type.not.toBeCallableWith({ initial: 'new' })
})
