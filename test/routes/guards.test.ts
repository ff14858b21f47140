// Guards of the workflow: decided on the order as stored, before anything is written, on routes and app.orders alike.
import Fastify from 'fastify'
import t from 'tap'
import orderPlugin, { defaultWorkflow, type TransitionGuard, type TransitionMove, type Workflow, type WorkflowGuards } from '../../lib/index.js'
import { Shipping, address, bodyWith } from '../custom-field-schemas.js'
import { buildApp, createOrder, orderBody, post, testStorage, waitForEvents } from '../helper.js'

/** The default workflow with these guards. */
const guarded = (guards: WorkflowGuards<typeof defaultWorkflow>): Workflow => ({ ...defaultWorkflow, guards })

t.test('a guard that returns false refuses the move with 409 ORDER_TRANSITION_REFUSED: nothing is written, no event, no listener', async t => {
  const app = await buildApp(t, { workflow: guarded({ paid: () => false }) })
  const moves: string[] = []
  app.orders.on('statusChanged', ({ to }) => { moves.push(to) })
  const order = await createOrder(app)
  const [created] = await waitForEvents(app, 1)
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  t.equal(status, 409)
  t.same(body, { statusCode: 409, code: 'ORDER_TRANSITION_REFUSED', error: 'Conflict', message: 'This order may not move from "pending" to "paid" now' })
  const [stored] = (await app.orders.list({ filter: { ids: [order.id] } })).items
  t.same(stored, order, 'the order is as it was')
  t.same(moves, [], 'no listener ran')
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'cancelled' })).status, 200, 'an unguarded move still goes')
  const [next] = await waitForEvents(app, 1, created!.id)
  t.match(next, { type: 'statusChanged', from: 'pending', order: { status: 'cancelled' } }, 'the refusal made no event')
})

t.test('a guard that returns a string refuses with that message, on the route and from app.orders', async t => {
  const app = await buildApp(t, { workflow: guarded({ shipped: async () => 'payment is not captured yet' }) })
  const order = await createOrder(app)
  await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'shipped' })
  t.equal(status, 409)
  t.match(body, { code: 'ORDER_TRANSITION_REFUSED', message: 'payment is not captured yet' })
  await t.rejects(app.orders.updateStatus({ id: order.id, status: 'shipped' }), { code: 'ORDER_TRANSITION_REFUSED', statusCode: 409, message: 'payment is not captured yet' })
  t.equal((await app.orders.list()).items[0]!.status, 'paid')
})

t.test('true or nothing, sync or async, allows the move; anything else refuses it', async t => {
  const decisions: unknown[] = [true, undefined, Promise.resolve(true), Promise.resolve(undefined), false, '', null, 0, 1, {}, Promise.resolve('not today')]
  const storage = await testStorage(t)
  let next: unknown
  const app = await buildApp(t, { storage, workflow: guarded({ paid: () => next as never }) })
  for (const decision of decisions) {
    next = decision
    const order = await createOrder(app)
    const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
    const allowed = decision === true || decision === undefined || (decision instanceof Promise && await decision !== 'not today')
    t.equal(status, allowed ? 200 : 409, `${String(decision)} ${allowed ? 'allows' : 'refuses'}`)
    if (!allowed) t.equal(body.code, 'ORDER_TRANSITION_REFUSED')
  }
})

t.test('a guard gets the order as stored, the move, the reason, the patch and the scope, all frozen', async t => {
  const seen: TransitionMove[] = []
  const app = await buildApp(t, {
    customFields: { order: Shipping },
    authorize: () => ({ customerId: 'cus_42', actor: 'staff_7' }),
    workflow: guarded({ shipped: move => { seen.push(move) } })
  })
  const order = (await post(app, 'createOrder', bodyWith({ address }))).body
  await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  const { body: shipped } = await post(app, 'updateOrderStatus', { id: order.id, status: 'shipped', reason: 'picked', customFields: { trackingNumber: 'TRK-1' } })
  t.equal(seen.length, 1)
  const [move] = seen as [TransitionMove]
  t.match(move, { from: 'paid', to: 'shipped', reason: 'picked', customFields: { trackingNumber: 'TRK-1' }, scope: { customerId: 'cus_42', actor: 'staff_7' } })
  t.match(move.order, { id: order.id, status: 'paid', version: 2 }, 'the order as stored, before the move')
  t.same((move.order as { customFields?: object }).customFields, { address }, 'without the patch')
  t.ok(Object.isFrozen(move) && Object.isFrozen(move.order) && Object.isFrozen(move.order.items) && Object.isFrozen(move.customFields) && Object.isFrozen(move.scope))
  t.equal(shipped.customFields.trackingNumber, 'TRK-1', 'the patch is stored with the allowed move')
})

t.test('a guard that throws passes its error through unchanged: a host\'s 402 stays a 402', async t => {
  const paymentRequired = Object.assign(new Error('capture the payment first'), { statusCode: 402, code: 'SHOP_PAYMENT_REQUIRED' })
  const app = await buildApp(t, { workflow: guarded({ paid: () => { throw paymentRequired } }) })
  const order = await createOrder(app)
  const { status, body } = await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  t.equal(status, 402)
  t.match(body, { code: 'SHOP_PAYMENT_REQUIRED', message: 'capture the payment first' })
  await t.rejects(app.orders.updateStatus({ id: order.id, status: 'paid' }), paymentRequired)
  t.equal((await app.orders.list()).items[0]!.version, 1, 'nothing written')
})

t.test('a guard runs only for a real move, after scope, validation and the version check', async t => {
  let calls = 0
  const app = await buildApp(t, {
    authorize: request => request.headers['x-customer'] === undefined ? true : { customerId: String(request.headers['x-customer']) },
    workflow: guarded({ paid: () => { calls++ }, refunded: () => { calls++ } })
  })
  const order = await createOrder(app)
  await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  t.equal(calls, 1)
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })).status, 200, 'a no-op')
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'refunded' }, { 'x-customer': 'cus_7' })).status, 404, 'out of scope')
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'refunded', reason: 'x'.repeat(501) })).status, 400, 'invalid')
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'refunded', expectedVersion: 1 })).status, 409, 'stale')
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'pending' })).body.code, 'ORDER_INVALID_TRANSITION', 'forbidden by the workflow')
  t.equal(calls, 1, 'none of them ran the guard')
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'refunded', expectedVersion: 2 })).status, 200)
  t.equal(calls, 2)
})

/** Resolves the guard's first call only when the test says. */
function heldGuard (decide: (move: TransitionMove) => boolean | string) {
  const versions: number[] = []
  let release!: () => void
  const held = new Promise<void>(resolve => { release = resolve })
  const guard: TransitionGuard = async move => {
    versions.push(move.order.version)
    if (versions.length === 1) await held
    return decide(move)
  }
  return { guard, versions, release }
}

// open → held → open changes the version and keeps the move to shipped allowed.
const cycle = { initial: 'open', transitions: { open: ['held', 'shipped'], held: ['open'], shipped: [] } } as const

t.test('a move whose order changed while its guard decided is decided again on the new version', async t => {
  const { guard, versions, release } = heldGuard(() => true)
  const app = await buildApp(t, { workflow: { ...cycle, guards: { shipped: guard } } })
  const order = await createOrder(app)
  const shipping = app.orders.updateStatus({ id: order.id, status: 'shipped' })
  while (versions.length === 0) await new Promise(resolve => setTimeout(resolve, 5))
  await app.orders.updateStatus({ id: order.id, status: 'held' })
  await app.orders.updateStatus({ id: order.id, status: 'open' })
  release()
  const shipped = await shipping
  t.same(versions, [1, 3], 'the guard saw version 1, lost the race, and decided again on version 3')
  t.same(shipped.statusHistory.map(({ status }) => status), ['open', 'held', 'open', 'shipped'])
  t.equal(shipped.version, 4)
})

t.test('a lost race never stores a move its guard did not see: a guard that refuses the new version refuses the move', async t => {
  const { guard, versions, release } = heldGuard(({ order }) => order.statusHistory.every(({ status }) => status !== 'held') || 'this order was held')
  const app = await buildApp(t, { workflow: { ...cycle, guards: { shipped: guard } } })
  const order = await createOrder(app)
  const shipping = post(app, 'updateOrderStatus', { id: order.id, status: 'shipped' })
  while (versions.length === 0) await new Promise(resolve => setTimeout(resolve, 5))
  await app.orders.updateStatus({ id: order.id, status: 'held' })
  await app.orders.updateStatus({ id: order.id, status: 'open' })
  release()
  t.match((await shipping).body, { code: 'ORDER_TRANSITION_REFUSED', message: 'this order was held' })
  t.same(versions, [1, 3])
  const [stored] = (await app.orders.list()).items
  t.same([stored!.status, stored!.version], ['open', 3], 'the move was not stored')
})

t.test('a guard keyed by a status the workflow does not have, or not a function, makes register fail saying which', async t => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['an unknown status', { dispatched: () => true }, /workflow\.guards\.dispatched: "dispatched" is not a status of workflow\.transitions \(pending, paid, shipped, delivered, cancelled, refunded\); a guard is keyed by the status a move goes to/],
    ['guards as an array', [() => true], /workflow\.guards must be an object keyed by the status a move goes to/],
    ['guards as a function', () => true, /workflow\.guards must be an object/],
    ['a guard that is not a function', { shipped: 'paid first' }, /workflow\.guards\.shipped must be a function/]
  ]
  for (const [name, guards, message] of cases) {
    const app = Fastify()
    app.register(orderPlugin, { workflow: { ...defaultWorkflow, guards } as Workflow })
    await t.rejects(async () => { await app.ready() }, { code: 'ORDER_INVALID_OPTIONS', message }, name)
    await app.close()
  }
  const app = await buildApp(t, { workflow: { ...defaultWorkflow, guards: { shipped: undefined } } })
  t.equal((await post(app, 'createOrder', orderBody())).status, 201, 'an undefined guard is no guard')
})

t.test('a workflow key misspelt, such as guard for guards, makes register fail naming it and the keys, rather than leave the rule out', async t => {
  for (const key of ['guard', 'initialStatus', 'transition']) {
    const app = Fastify()
    app.register(orderPlugin, { workflow: { ...defaultWorkflow, [key]: { shipped: () => 'never' } } as Workflow })
    await t.rejects(async () => { await app.ready() }, {
      code: 'ORDER_INVALID_OPTIONS',
      message: `fastify-order: workflow has no key "${key}"; the keys of a workflow are initial, transitions, guards`
    }, key)
    await app.close()
  }
  const app = await buildApp(t, { workflow: { ...defaultWorkflow, guards: { shipped: () => 'never' } } })
  const { id } = await createOrder(app)
  await post(app, 'updateOrderStatus', { id, status: 'paid' })
  t.match(await post(app, 'updateOrderStatus', { id, status: 'shipped' }), { status: 409, body: { code: 'ORDER_TRANSITION_REFUSED' } }, 'spelt right, the guard holds')
  t.equal((await app.orders.list()).items[0]!.status, 'paid')
})
