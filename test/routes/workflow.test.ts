import t from 'tap'
import Fastify from 'fastify'
import orderPlugin, { defaultWorkflow, type Workflow } from '../../lib/index.js'
import { buildApp, createOrder, post } from '../helper.js'

t.test('the default workflow allows exactly the moves of the contract', async t => {
  t.same(defaultWorkflow, {
    initial: 'pending',
    transitions: {
      pending: ['paid', 'cancelled'],
      paid: ['shipped', 'cancelled', 'refunded'],
      shipped: ['delivered', 'refunded'],
      delivered: ['refunded'],
      cancelled: [],
      refunded: []
    }
  })
  const app = await buildApp(t)
  const statuses = Object.keys(defaultWorkflow.transitions)
  for (const from of statuses) {
    for (const to of statuses) {
      if (from === to || from === 'pending') continue
      const order = await createOrder(app)
      // Reach `from` along the shortest allowed path.
      const path = { paid: ['paid'], shipped: ['paid', 'shipped'], delivered: ['paid', 'shipped', 'delivered'], cancelled: ['cancelled'], refunded: ['paid', 'refunded'] }[from]!
      for (const step of path) await post(app, 'updateOrderStatus', { id: order.id, status: step })
      const { status } = await post(app, 'updateOrderStatus', { id: order.id, status: to })
      const allowed = (defaultWorkflow.transitions as Record<string, readonly string[]>)[from]!.includes(to)
      t.equal(status, allowed ? 200 : 409, `${from} -> ${to}`)
    }
  }
})

t.test('the default workflow cannot be changed by a host', async t => {
  t.throws(() => { (defaultWorkflow.transitions.pending as unknown as string[]).push('shipped') })
  t.throws(() => { (defaultWorkflow as { initial: string }).initial = 'paid' })
})

t.test('a custom workflow replaces the default one', async t => {
  const workflow: Workflow = { initial: 'new', transitions: { new: ['done', 'void'], done: [], void: [] } }
  const app = await buildApp(t, { workflow })
  const order = await createOrder(app)
  t.equal(order.status, 'new')
  t.same(order.statusHistory, [{ status: 'new', at: order.createdAt }])
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })).status, 400, 'default statuses are unknown now')
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'done' })).status, 200)
  t.equal((await post(app, 'updateOrderStatus', { id: order.id, status: 'void' })).body.code, 'ORDER_INVALID_TRANSITION')
  const listed = await post(app, 'getOrderList', { filter: { status: 'done' } })
  t.equal(listed.body.items.length, 1)
  t.equal((await post(app, 'getOrderList', { filter: { status: 'pending' } })).status, 400)
})

t.test('a workflow that does not hold together makes register fail, saying what to fix', async t => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['not an object', 'pending', /workflow must be an object/],
    ['no transitions', { initial: 'new' }, /transitions must be an object/],
    ['transitions as an array', { initial: 'new', transitions: [] }, /transitions must be an object/],
    ['no statuses', { initial: 'new', transitions: {} }, /at least one status/],
    ['initial not a status', { initial: 'open', transitions: { new: [] } }, /initial "open" is not a status/],
    ['initial missing', { transitions: { new: [] } }, /initial undefined is not a status/],
    ['a target not a status', { initial: 'new', transitions: { new: ['dne'] } }, /transitions\.new moves to "dne", which is not a status/],
    ['targets not an array', { initial: 'new', transitions: { new: 'done', done: [] } }, /transitions\.new must be an array/],
    ['a status name with spaces', { initial: 'new', transitions: { new: [], 'in transit': [] } }, /status "in transit" must be/]
  ]
  for (const [name, workflow, message] of cases) {
    const app = Fastify()
    app.register(orderPlugin, { workflow: workflow as Workflow })
    await t.rejects(async () => { await app.ready() }, { code: 'ORDER_INVALID_OPTIONS', message }, name)
    await app.close()
  }
})
