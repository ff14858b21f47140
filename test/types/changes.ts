// Type tests of changes after placement: actions as a discriminated union, the order with changes on, the option's statuses typed
// from a workflow declared `as const`. Compile-time assertions (expect-type), checked by the type check; never run.
// Each `// @ts-expect-error` covers the one line after it: that line must not compile, for the reason given.
import Fastify from 'fastify'
import { expectTypeOf } from 'expect-type'
import orderPlugin, {
  ChangeOrderBodySchema, type ChangeAction, type ChangeGuard, type ChangeOrderInput, type ChangesOptions, type Order, type OrderChange,
  type OrderChangedEvent, type OrderChangeProposal, type OrderPayment, type OrderWithChanges
} from '../../lib/index.js'
import type { Static } from '@sinclair/typebox'

const shop = { initial: 'new', transitions: { new: ['paid', 'void'], paid: ['shipped'], shipped: [], void: [] } } as const
const app = Fastify()

// an action is told apart by its type: narrowing on it gives the action's own fields
const describe = (action: ChangeAction): string => {
  switch (action.type) {
    case 'addItem': return action.item.sku
    case 'recordPayment':
    case 'recordRefund': return action.reference
    default: return String(action.index)
  }
}
expectTypeOf(describe).parameter(0).toEqualTypeOf<ChangeAction>()
expectTypeOf<Extract<ChangeAction, { type: 'cancelItem' }>>().toEqualTypeOf<{ type: 'cancelItem', index: number, quantity: number }>()
expectTypeOf({ type: 'recordPayment', amount: 100, reference: 'pi_1' } as const).toExtend<ChangeAction>()
expectTypeOf({ type: 'recordPayment', index: 0 } as const).not.toExtend<ChangeAction>()
expectTypeOf({ type: 'removeItem', index: 0 } as const).not.toExtend<ChangeAction>()
expectTypeOf<ChangeOrderInput>().toEqualTypeOf<Static<typeof ChangeOrderBodySchema>>()
expectTypeOf<ChangeOrderInput['preview']>().toEqualTypeOf<boolean | undefined>()

// the order with changes on: the ledger and the lines' counters; the order without them has none
expectTypeOf<OrderWithChanges['paid']>().toEqualTypeOf<number>()
expectTypeOf<OrderWithChanges['payments']>().toEqualTypeOf<OrderPayment[]>()
expectTypeOf<OrderWithChanges['changes']>().toEqualTypeOf<OrderChange[]>()
expectTypeOf<OrderWithChanges['items'][number]['cancelled']>().toEqualTypeOf<number | undefined>()
expectTypeOf<OrderPayment['kind']>().toEqualTypeOf<'payment' | 'refund'>()
expectTypeOf<OrderChange['actions']>().toEqualTypeOf<ChangeAction[]>()
expectTypeOf<Order>().not.toHaveProperty('balance')
expectTypeOf<OrderWithChanges>().toExtend<Order>()

// app.orders.change answers the order with changes, on the app and in the host's transaction
expectTypeOf(app.orders.change({ id: 'o', actions: [{ type: 'setQuantity', index: 0, quantity: 1 }] })).toEqualTypeOf<Promise<OrderWithChanges>>()
expectTypeOf(app.orders.withTransaction({ query: async () => ({ rows: [] }) }).change).toEqualTypeOf<typeof app.orders.change>()
// @ts-expect-error an action needs its type's fields
expectTypeOf(app.orders.change).toBeCallableWith({ id: 'o', actions: [{ type: 'setQuantity', index: 0 }] })
app.orders.on('changed', event => { expectTypeOf(event).toEqualTypeOf<OrderChangedEvent>() })

// the option: true, or statuses of the workflow; for a workflow declared as const a status it does not have does not compile
app.register(orderPlugin, { changes: true })
app.register(orderPlugin, { changes: { route: true, lineEdits: ['pending'], guard: ({ after }) => after.balance >= 0 || 'refund first' } })
expectTypeOf({ lineEdits: ['new', 'paid'], returns: ['shipped'] } as const).toExtend<ChangesOptions<typeof shop>>()
app.register(orderPlugin, { workflow: shop, changes: { lineEdits: ['new'], returns: ['shipped'] } satisfies ChangesOptions<typeof shop> })
expectTypeOf({ lineEdits: ['packed'] } as const).not.toExtend<ChangesOptions<typeof shop>>()
expectTypeOf({ route: 'yes' } as const).not.toExtend<ChangesOptions<typeof shop>>()

// the guard decides on the order, the actions and the order after, as a workflow guard does
expectTypeOf<OrderChangeProposal['after']>().toEqualTypeOf<OrderWithChanges>()
expectTypeOf<OrderChangeProposal['actions']>().toEqualTypeOf<readonly ChangeAction[]>()
expectTypeOf(async ({ order }: OrderChangeProposal) => order.balance > 0).toExtend<ChangeGuard>()
expectTypeOf(() => 42).not.toExtend<ChangeGuard>()
