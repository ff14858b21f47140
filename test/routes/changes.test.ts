// Changes after placement: changeOrder and app.orders.change apply actions all or none, with a ledger, a preview, idempotency keys, a guard and a changed event.
import Fastify from 'fastify'
import t from 'tap'
import orderPlugin, { memoryStorage, type ChangeAction, type OrderChangedEvent, type OrderPluginOptions, type OrderStorage, type OrderWithChanges } from '../../lib/index.js'
import { buildApp, createOrder, eventually, orderBody, post, storeOrder, storedOrder, testStorage, waitForEvents } from '../helper.js'

const withRoute: OrderPluginOptions = { changes: { route: true } }
const pay = (amount: number, reference: string): ChangeAction => ({ type: 'recordPayment', amount, reference })

t.test('with changes off nothing is new: no changeOrder route, no ledger on orders, no balance filter, app.orders.change refuses', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  t.notOk('paid' in order || 'balance' in order || 'payments' in order || 'changes' in order, 'the order has no ledger')
  t.equal((await post(app, 'changeOrder', { id: order.id, actions: [pay(1, 'p')] })).status, 404, 'no route')
  const list = await post(app, 'getOrderList', { filter: { balance: 'due' } })
  t.equal(list.status, 400, 'filter.balance is an unknown property')
  await t.rejects(app.orders.change({ id: order.id, actions: [pay(1, 'p')] }), { code: 'ORDER_INVALID_OPTIONS', message: /needs the changes option/ })
})

t.test('changes: true gives app.orders.change and the ledger, but no route', async t => {
  const app = await buildApp(t, { changes: true })
  const order = await createOrder(app)
  t.match(order, { paid: 0, balance: 2500, payments: [], changes: [] }, 'a new order has its ledger')
  t.equal((await post(app, 'changeOrder', { id: order.id, actions: [pay(1, 'p')] })).status, 404, 'no route without changes.route')
  const changed = await app.orders.change({ id: order.id, actions: [pay(1000, 'pi_1')] })
  t.match(changed, { version: 2, paid: 1000, balance: 1500 })
  const { payments, changes } = changed
  t.ok([changed, payments, payments[0], changes, changes[0], changes[0]!.actions, changes[0]!.actions[0]].every(Object.isFrozen), 'what app.orders hands out is frozen, its ledger\'s arrays too')
  t.throws(() => (payments as unknown[]).push({ kind: 'payment', amount: 1500 }), TypeError, 'a host cannot add a payment the storage never recorded')
  const listed = (await app.orders.list({})).items[0] as OrderWithChanges
  t.ok([listed.payments, listed.changes, listed.changes[0]!.actions].every(Object.isFrozen), 'and so is an order listed')
  t.match((await app.orders.list({ filter: { ids: [order.id] } })).items, [{ paid: 1000, payments: [{ amount: 1000 }] }], 'the stored order is as the change left it')
})

t.test('an edit, a partial return and its refund: status, totals, ledger, version and the stored order afterwards', async t => {
  const app = await buildApp(t, withRoute)
  const order = await createOrder(app, { items: [{ sku: 'MUG', name: 'Mug', quantity: 2, unitPrice: 1250 }, { sku: 'PLATE', quantity: 1, unitPrice: 900 }] })
  const edit = await post(app, 'changeOrder', {
    id: order.id,
    expectedVersion: 1,
    reason: 'one mug fewer, a bowl more',
    actions: [{ type: 'setQuantity', index: 0, quantity: 1 }, { type: 'addItem', item: { sku: 'BOWL', quantity: 1, unitPrice: 600 } }, pay(2750, 'pi_1')]
  })
  t.equal(edit.status, 200)
  t.match(edit.body, { version: 2, total: 2750, paid: 2750, balance: 0, items: [{ sku: 'MUG', quantity: 1 }, { sku: 'PLATE' }, { sku: 'BOWL', quantity: 1, unitPrice: 600 }] })
  t.same(edit.body.changes, [{
    version: 2,
    at: edit.body.updatedAt,
    reason: 'one mug fewer, a bowl more',
    actions: [{ type: 'setQuantity', index: 0, quantity: 1 }, { type: 'addItem', item: { sku: 'BOWL', quantity: 1, unitPrice: 600 } }, pay(2750, 'pi_1')],
    totalBefore: 3400,
    totalAfter: 2750
  }])
  await post(app, 'updateOrderStatus', { id: order.id, status: 'paid' })
  await post(app, 'updateOrderStatus', { id: order.id, status: 'shipped' })
  const returned = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'returnItem', index: 1, quantity: 1 }] })
  t.equal(returned.status, 200)
  t.match(returned.body, { version: 5, total: 1850, paid: 2750, balance: -900 })
  t.same(returned.body.items[1], { sku: 'PLATE', quantity: 1, unitPrice: 900, returned: 1 }, 'the line keeps its quantity and counts the return')
  const refunded = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'recordRefund', amount: 900, reference: 're_1' }] })
  t.match(refunded.body, { version: 6, paid: 1850, balance: 0 })
  const stored = (await app.orders.list({ filter: { ids: [order.id] } })).items[0] as OrderWithChanges
  t.same(stored, refunded.body, 'stored as answered')
  t.equal(stored.version, stored.statusHistory.length + stored.changes.length, 'version = moves + changes')
  t.same(stored.payments.map(({ kind, amount }) => [kind, amount]), [['payment', 2750], ['refund', 900]])
})

t.test('an action the order does not allow is 409 ORDER_CHANGE_REFUSED naming it, and nothing of the change is stored', async t => {
  const app = await buildApp(t, withRoute)
  const order = await createOrder(app)
  const { status, body } = await post(app, 'changeOrder', { id: order.id, actions: [pay(500, 'pi_1'), { type: 'cancelItem', index: 0, quantity: 3 }] })
  t.equal(status, 409)
  t.same(body, { statusCode: 409, code: 'ORDER_CHANGE_REFUSED', error: 'Conflict', message: 'actions[1]: items[0] has 2 open, not 3' })
  const returned = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'returnItem', index: 0, quantity: 1 }] })
  t.match(returned.body, { code: 'ORDER_CHANGE_REFUSED', message: 'actions[0]: returnItem is allowed in shipped or delivered, and the order is pending' })
  t.match((await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'setUnitPrice', index: 1, unitPrice: 1 }] })).body,
    { code: 'ORDER_CHANGE_REFUSED', message: 'actions[0]: items[1] does not exist: the order has 1 line' }, 'an index past the last line is a 409')
  t.match((await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'cancelItem', index: 123456789, quantity: 1 }] })).body,
    { code: 'ORDER_CHANGE_REFUSED', message: 'actions[0]: items[123456789] does not exist: the order has 1 line' }, 'however far past')
  const stored = (await app.orders.list()).items[0]
  t.same(stored, order, 'all or none: not even the payment before the refused action')
})

t.test('a body that breaks the schema is 400, whatever the action', async t => {
  const app = await buildApp(t, withRoute)
  const order = await createOrder(app)
  const bodies = [
    { id: order.id, actions: [] },
    { id: order.id, actions: Array.from({ length: 51 }, (_, i) => pay(1, `p${i}`)) },
    { id: order.id, actions: [{ type: 'setQuantity', index: -1, quantity: 1 }] },
    { id: order.id, actions: [{ type: 'setQuantity', index: 0.5, quantity: 1 }] },
    { id: order.id, actions: [{ type: 'cancelItem', index: 0, quantity: 0 }] },
    { id: order.id, actions: [{ type: 'recordPayment', amount: 0, reference: 'p' }] },
    { id: order.id, actions: [{ type: 'recordPayment', amount: 10, reference: '' }] },
    { id: order.id, actions: [{ type: 'addItem', item: { sku: 'X', quantity: 0, unitPrice: 1 } }] },
    { id: order.id, actions: [{ type: 'removeItem', index: 0 }] },
    { id: order.id, actions: [{ ...pay(1, 'p'), index: 0 }] },
    { id: order.id, actions: [pay(1, 'p')], preview: 'yes' }
  ]
  for (const body of bodies) {
    const answer = await post(app, 'changeOrder', body)
    t.equal(answer.status, 400, JSON.stringify(body).slice(0, 120))
    t.equal(answer.body.code, 'FST_ERR_VALIDATION')
  }
  t.match((await post(app, 'changeOrder', bodies[4])).body.message, 'body/actions/0/quantity must be >= 1', 'the error is of the action\'s own type')
  t.same((await app.orders.list()).items, [order], 'nothing changed')
})

t.test('404 outside the scope, 409 ORDER_VERSION_CONFLICT for a stale expectedVersion', async t => {
  const app = await buildApp(t, { changes: { route: true, customerActions: ['recordPayment'] }, authorize: request => request.headers['x-customer'] === undefined ? true : { customerId: request.headers['x-customer'] as string } })
  const order = await createOrder(app, { customerId: 'alice' })
  const other = await app.inject({ method: 'POST', url: '/order/changeOrder', headers: { 'x-customer': 'bob' }, payload: { id: order.id, actions: [pay(1, 'p')] } })
  t.equal(other.statusCode, 404)
  t.equal(other.json().code, 'ORDER_NOT_FOUND')
  t.equal((await post(app, 'changeOrder', { id: 'ord_unknown', actions: [pay(1, 'p')] })).body.code, 'ORDER_NOT_FOUND')
  const stale = await post(app, 'changeOrder', { id: order.id, expectedVersion: 2, actions: [pay(1, 'p')] })
  t.equal(stale.status, 409)
  t.equal(stale.body.code, 'ORDER_VERSION_CONFLICT')
  t.same((await app.orders.list()).items, [order], 'nothing changed')
})

t.test('authorize is asked for operation changeOrder; false is 403 ORDER_FORBIDDEN', async t => {
  const operations: string[] = []
  const app = await buildApp(t, { ...withRoute, authorize: (_request, operation) => { operations.push(operation); return operation !== 'changeOrder' } })
  const order = await createOrder(app)
  const { status, body } = await post(app, 'changeOrder', { id: order.id, actions: [pay(1, 'p')] })
  t.equal(status, 403)
  t.equal(body.code, 'ORDER_FORBIDDEN')
  t.same(operations, ['createOrder', 'changeOrder'])
  const misconfigured = await buildApp(t, { ...withRoute, authorize: (_request, operation) => operation === 'changeOrder' ? { customerID: 'x' } as never : true })
  const other = await createOrder(misconfigured)
  const invalid = await post(misconfigured, 'changeOrder', { id: other.id, actions: [pay(1, 'p')] })
  t.equal(invalid.status, 500, 'a scope that breaks the rules fails closed')
  t.equal(invalid.body.code, 'ORDER_INVALID_SCOPE')
  t.same((await misconfigured.orders.list()).items, [other], 'nothing changed')
})

t.test('the scope\'s actor is who made the change and its payments', async t => {
  const app = await buildApp(t, { changes: true })
  const order = await createOrder(app)
  const changed = await app.orders.change({ id: order.id, actions: [pay(100, 'pi_1')] }, { scope: { actor: 'staff_7' } })
  t.equal(changed.changes[0]!.by, 'staff_7')
  t.equal(changed.payments[0]!.by, 'staff_7')
})

t.test('a preview answers the order as the change would leave it and stores nothing: no version, no event, no key', async t => {
  const app = await buildApp(t, withRoute)
  const order = await createOrder(app)
  const [created] = await waitForEvents(app, 1)
  const body = { id: order.id, actions: [{ type: 'cancelItem', index: 0, quantity: 1 }], preview: true }
  const preview = await post(app, 'changeOrder', body, { 'idempotency-key': 'edit-1' })
  t.equal(preview.status, 200)
  t.match(preview.body, { version: 2, total: 1250, balance: 1250, changes: [{ version: 2, totalBefore: 2500, totalAfter: 1250 }] })
  t.notOk(preview.headers['idempotent-replayed'])
  t.same((await app.orders.list()).items, [order], 'nothing stored')
  const refused = await post(app, 'changeOrder', { ...body, actions: [{ type: 'cancelItem', index: 0, quantity: 5 }] })
  t.equal(refused.body.code, 'ORDER_CHANGE_REFUSED', 'the same errors as the real call')
  const real = await post(app, 'changeOrder', { ...body, preview: false }, { 'idempotency-key': 'edit-1' })
  t.equal(real.status, 200)
  t.notOk(real.headers['idempotent-replayed'], 'the preview claimed no key')
  t.same({ ...real.body, updatedAt: 0, changes: [] }, { ...preview.body, updatedAt: 0, changes: [] }, 'the real change is what the preview said')
  const [changed, ...more] = await waitForEvents(app, 1, created!.id)
  t.equal(changed!.type, 'changed')
  t.same(more, [], 'one event: the real change\'s')
})

t.test('a change whose every action is skipped stores nothing: 200 with the order as it is, no event, no guard', async t => {
  let guarded = 0
  const app = await buildApp(t, { changes: { route: true, guard: () => { guarded++ } } })
  const order = await createOrder(app)
  const paid = (await post(app, 'changeOrder', { id: order.id, actions: [pay(1000, 'pi_1')] })).body
  const [, first] = await waitForEvents(app, 2)
  const retried = await post(app, 'changeOrder', { id: order.id, actions: [pay(1000, 'pi_1')] })
  t.equal(retried.status, 200)
  t.same(retried.body, paid, 'the provider\'s retried notice is skipped')
  t.equal(guarded, 1, 'the guard ran for the first only')
  await app.orders.updateStatus({ id: order.id, status: 'cancelled' })
  const [next] = await waitForEvents(app, 1, first!.id)
  t.equal(next!.type, 'statusChanged', 'the skipped change made no event')
  const mismatch = await post(app, 'changeOrder', { id: order.id, actions: [pay(999, 'pi_1')] })
  t.match(mismatch.body, { code: 'ORDER_CHANGE_REFUSED', message: 'actions[0]: reference "pi_1" is recorded already, as a payment of 1000' })
})

t.test('Idempotency-Key: a replay answers 200 with the order as the first call left it, even after the order moved on; another body is 422', async t => {
  const app = await buildApp(t, withRoute)
  const order = await createOrder(app)
  const body = { id: order.id, actions: [{ type: 'cancelItem', index: 0, quantity: 1 }] as ChangeAction[] }
  const first = await post(app, 'changeOrder', body, { 'idempotency-key': 'cancel-1' })
  t.equal(first.status, 200)
  await post(app, 'changeOrder', { id: order.id, actions: [pay(1250, 'pi_1')] })
  const replay = await post(app, 'changeOrder', { actions: body.actions, id: order.id }, { 'idempotency-key': 'cancel-1' })
  t.equal(replay.status, 200)
  t.equal(replay.headers['idempotent-replayed'], 'true')
  t.same(replay.body, first.body, 'the order as the first call left it')
  const stored = (await app.orders.list()).items[0] as OrderWithChanges
  t.equal(stored.items[0]!.cancelled, 1, 'cancelled once, not twice')
  t.equal(stored.version, 3)
  const reused = await post(app, 'changeOrder', { ...body, reason: 'another body' }, { 'idempotency-key': 'cancel-1' })
  t.equal(reused.status, 422)
  t.equal(reused.body.code, 'ORDER_IDEMPOTENCY_KEY_REUSED')
  t.equal((await post(app, 'changeOrder', body, { 'idempotency-key': ' bad key' })).body.code, 'ORDER_INVALID_IDEMPOTENCY_KEY')
  // A change's key never meets a create's.
  const created = await post(app, 'createOrder', orderBody(), { 'idempotency-key': 'cancel-1' })
  t.equal(created.status, 201)
  t.notOk(created.headers['idempotent-replayed'])
  const viaService = await app.orders.change(body, { idempotencyKey: 'cancel-1' })
  t.same(viaService, first.body, 'app.orders.change replays the same key')
})

t.test('concurrent changes with one key store one change; each answers it or 409 ORDER_IDEMPOTENCY_IN_PROGRESS', async t => {
  const app = await buildApp(t, withRoute)
  const order = await createOrder(app)
  const body = { id: order.id, actions: [{ type: 'cancelItem', index: 0, quantity: 1 }] }
  const answers = await Promise.all(Array.from({ length: 6 }, () => post(app, 'changeOrder', body, { 'idempotency-key': 'burst' })))
  for (const answer of answers) {
    if (answer.status === 409) t.equal(answer.body.code, 'ORDER_IDEMPOTENCY_IN_PROGRESS')
    else t.match(answer, { status: 200, body: { version: 2 } })
  }
  const stored = (await app.orders.list()).items[0] as OrderWithChanges
  t.equal(stored.changes.length, 1, 'one change')
  t.equal(stored.items[0]!.cancelled, 1)
})

t.test('a change that loses its race to another with the same key answers that one\'s order as a replay', async t => {
  const inner = memoryStorage()
  let raced = false
  const body = { id: '', actions: [pay(1000, 'pi_1')] }
  const storage: OrderStorage = {
    ...inner,
    replace: async (order, version, event, claim) => {
      if (!raced && claim !== undefined) {
        raced = true
        // The same request, sent again by a client that timed out, stores first.
        await app.orders.change({ ...body }, { idempotencyKey: 'race' })
      }
      return inner.replace(order, version, event, claim)
    }
  }
  const app = await buildApp(t, { ...withRoute, storage })
  body.id = (await createOrder(app)).id
  const { status, body: answer, headers } = await post(app, 'changeOrder', body, { 'idempotency-key': 'race' })
  t.equal(status, 200)
  t.equal(headers['idempotent-replayed'], 'true')
  const stored = (await inner.get(body.id)) as OrderWithChanges
  t.same(answer, stored, 'the order the other call left')
  t.equal(stored.changes.length, 1, 'one change stored')
})

t.test('a claim in flight (the storage refuses the write while the order stays at its version and no claim is readable) is 409 ORDER_IDEMPOTENCY_IN_PROGRESS', async t => {
  const inner = memoryStorage()
  const storage: OrderStorage = { ...inner, replace: async (order, version, event, claim) => claim === undefined && inner.replace(order, version, event) }
  const app = await buildApp(t, { ...withRoute, storage })
  const order = await createOrder(app)
  const { status, body } = await post(app, 'changeOrder', { id: order.id, actions: [pay(1, 'p')] }, { 'idempotency-key': 'in-flight' })
  t.equal(status, 409)
  t.equal(body.code, 'ORDER_IDEMPOTENCY_IN_PROGRESS')
  t.equal((await inner.get(order.id))!.version, 1, 'nothing stored')
})

t.test('the guard gets the order, the actions and the order after; it refuses with 409 ORDER_CHANGE_REFUSED in its words, before anything is written', async t => {
  const seen: unknown[] = []
  const app = await buildApp(t, {
    changes: {
      route: true,
      guard: ({ order, actions, after, scope }) => {
        seen.push({ version: order.version, actions: actions.length, total: after.total, scope, frozen: Object.isFrozen(order) && Object.isFrozen(after) })
        return after.total >= 1000 || 'an order keeps at least 10.00 open'
      }
    }
  })
  const order = await createOrder(app)
  const ok = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'cancelItem', index: 0, quantity: 1 }] })
  t.equal(ok.status, 200)
  const refused = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'setUnitPrice', index: 0, unitPrice: 999 }] })
  t.same(refused.body, { statusCode: 409, code: 'ORDER_CHANGE_REFUSED', error: 'Conflict', message: 'an order keeps at least 10.00 open' })
  const preview = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'setUnitPrice', index: 0, unitPrice: 999 }], preview: true })
  t.equal(preview.body.code, 'ORDER_CHANGE_REFUSED', 'a preview runs the guard too')
  t.same(seen, [
    { version: 1, actions: 1, total: 1250, scope: undefined, frozen: true },
    { version: 2, actions: 1, total: 999, scope: undefined, frozen: true },
    { version: 2, actions: 1, total: 999, scope: undefined, frozen: true }
  ])
  t.equal(((await app.orders.list()).items[0] as OrderWithChanges).version, 2, 'the refused change stored nothing')
  await app.orders.change({ id: order.id, actions: [pay(1, 'p')] }, { scope: { actor: 'staff_7' } })
  t.same(seen.at(-1), { version: 2, actions: 1, total: 1250, scope: { actor: 'staff_7' }, frozen: true }, 'the guard gets the caller\'s scope')
  const generic = await buildApp(t, { changes: { guard: () => false } })
  const other = await generic.orders.create(orderBody())
  await t.rejects(generic.orders.change({ id: other.id, actions: [pay(1, 'p')] }), { code: 'ORDER_CHANGE_REFUSED', message: `This change of order "${other.id}" is refused` })
})

t.test('a guard runs again on the order as now stored when another writer changed it meanwhile', async t => {
  const storage = await testStorage(t)
  const versions: number[] = []
  let raced = false
  const app = await buildApp(t, {
    storage,
    changes: {
      guard: async ({ order }) => {
        versions.push(order.version)
        if (!raced) {
          raced = true
          await app.orders.change({ id: order.id, actions: [pay(700, 'other_writer')] })
        }
      }
    }
  })
  const order = await createOrder(app)
  const changed = await app.orders.change({ id: order.id, actions: [pay(500, 'pi_1')] })
  t.same(versions, [1, 1, 2], 'the first decision, the other writer\'s, and this one again on version 2')
  t.match(changed, { version: 3, paid: 1200, balance: 1300 })
  t.same(changed.payments.map(({ reference }) => reference), ['other_writer', 'pi_1'], 'neither is lost')
})

t.test('two dozen concurrent writers on one order, payments and moves without expectedVersion, all land', async t => {
  const storage = await testStorage(t)
  const app = await buildApp(t, { storage, changes: { route: true }, workflow: { initial: 'open', transitions: { open: ['held'], held: ['open'] } } })
  const order = await createOrder(app, { items: [{ sku: 'A', quantity: 1, unitPrice: 100_000 }] })
  const writers = Array.from({ length: 24 }, (_, i) => i % 3 === 0
    ? post(app, 'updateOrderStatus', { id: order.id, status: i % 2 === 0 ? 'held' : 'open' })
    : post(app, 'changeOrder', { id: order.id, actions: [pay(100 + i, `pay_${i}`)] }))
  const answers = await Promise.all(writers)
  t.same(answers.map(({ status }) => status), answers.map(() => 200), 'never ORDER_VERSION_CONFLICT')
  const stored = (await app.orders.list()).items[0] as OrderWithChanges
  const payments = Array.from({ length: 24 }, (_, i) => i).filter(i => i % 3 !== 0)
  t.same(stored.payments.map(({ reference }) => reference).sort(), payments.map(i => `pay_${i}`).sort(), 'every payment is in the ledger')
  t.equal(stored.paid, payments.reduce((sum, i) => sum + 100 + i, 0), 'paid is the sum of the payments')
  t.equal(stored.balance, stored.total - stored.paid)
  t.equal(stored.changes.length, 16, 'one change each')
  t.equal(stored.version, stored.statusHistory.length + stored.changes.length, 'version = moves + changes')
})

t.test('a changed event goes through the feed and to listeners, with the order as stored and its change', async t => {
  const app = await buildApp(t, { changes: true })
  const heard: OrderChangedEvent[] = []
  app.orders.on('changed', event => { heard.push(event) })
  const order = await app.orders.create(orderBody())
  const changed = await app.orders.change({ id: order.id, actions: [pay(100, 'pi_1')] })
  const [, event] = await waitForEvents(app, 2)
  t.match(event, { type: 'changed', at: changed.updatedAt, order: changed, change: changed.changes[0] })
  await eventually('the listener ran', () => heard.length === 1)
  t.same(heard[0], event, 'the listener gets the feed\'s event')
  t.ok(Object.isFrozen(heard[0]) && Object.isFrozen(heard[0]!.order), 'frozen')
})

t.test('orders stored before changes were on read with paid 0, balance = total, no payments and no changes, and can be changed', async t => {
  const storage = await testStorage(t)
  const before = await buildApp(t, { storage })
  const old = await createOrder(before)
  const app = await buildApp(t, { ...withRoute, storage })
  const [listed] = (await post(app, 'getOrderList', {})).body.items
  t.same(listed, { ...old, paid: 0, balance: 2500, payments: [], changes: [] }, 'listed with the ledger')
  const moved = await post(app, 'updateOrderStatus', { id: old.id, status: 'paid' })
  t.match(moved.body, { paid: 0, balance: 2500, payments: [], changes: [], version: 2 }, 'a move answers it with the ledger')
  const changed = await post(app, 'changeOrder', { id: old.id, actions: [pay(2500, 'pi_1')] })
  t.match(changed.body, { version: 3, paid: 2500, balance: 0 })
})

t.test('filter.balance lists orders by the sign of their balance: due, settled, owed, with the other filters and pages', async t => {
  const storage = await testStorage(t)
  const app = await buildApp(t, { ...withRoute, storage })
  const due = await createOrder(app)
  const settled = await createOrder(app, { customerId: 'cus_7' })
  await post(app, 'changeOrder', { id: settled.id, actions: [pay(2500, 'pi_s')] })
  const owed = await createOrder(app)
  await post(app, 'changeOrder', { id: owed.id, actions: [pay(3000, 'pi_o')] })
  const stale = storedOrder({ customerId: 'cus_42', total: 0, items: [{ sku: 'FREE', quantity: 1, unitPrice: 0 }] })
  await storeOrder(storage, stale)
  const ids = async (filter: object, limit = 10) => {
    const seen: string[] = []
    let cursor: string | undefined
    do {
      const page = await post(app, 'getOrderList', { filter, limit, ...(cursor && { cursor }) })
      t.equal(page.status, 200, JSON.stringify(filter))
      seen.push(...page.body.items.map(({ id }: { id: string }) => id))
      cursor = page.body.nextCursor ?? undefined
    } while (cursor !== undefined)
    return seen
  }
  t.same(await ids({ balance: 'due' }), [due.id], 'due: above 0')
  t.same((await ids({ balance: 'settled' })).sort(), [settled.id, stale.id].sort(), 'settled: 0, an order without a ledger by its total')
  t.same(await ids({ balance: 'owed' }), [owed.id], 'owed: below 0')
  t.same(await ids({ balance: 'settled', customerId: 'cus_7' }), [settled.id], 'with another filter')
  t.same((await ids({ balance: 'settled', status: 'pending' }, 1)).sort(), [settled.id, stale.id].sort(), 'a page at a time')
  t.equal((await post(app, 'getOrderList', { filter: { balance: 'negative' } })).status, 400)
})

t.test('register refuses a changes option that cannot work, naming what to change', async t => {
  const cases: Array<[unknown, RegExp]> = [
    ['yes', /changes must be true or an object like \{ route: true \}, got "yes"/],
    [{ routes: true }, /unknown option "changes.routes"; the options of changes are route, lineEdits, returns, guard/],
    [{ route: 'yes' }, /changes.route must be true or false, got "yes"/],
    [{ lineEdits: ['pending', 'packed'] }, /changes.lineEdits must be an array of statuses of the workflow \(pending, paid, shipped, delivered, cancelled, refunded\); "packed" is not one/],
    [{ returns: 'shipped' }, /changes.returns must be an array of statuses of the workflow .*, got "shipped"/],
    [{ guard: 'no' }, /changes.guard must be a function/]
  ]
  for (const [changes, message] of cases) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(orderPlugin, { changes } as never).ready() }, { code: 'ORDER_INVALID_OPTIONS', message }, JSON.stringify(changes))
  }
  const { readChangeClaim: _, ...older } = memoryStorage()
  await t.rejects(async () => { await Fastify().register(orderPlugin, { storage: older, changes: true }).ready() }, { code: 'ORDER_INVALID_OPTIONS', message: /changes need a storage with readChangeClaim/ })
  const off = Fastify()
  t.teardown(() => off.close())
  await t.resolves(async () => { await off.register(orderPlugin, { storage: older, changes: false }).ready() }, 'a storage written before changes serves a host that leaves them off')
})

t.test('lineEdits and returns default from the workflow, and decide where actions are allowed', async t => {
  const custom = await buildApp(t, { changes: true, workflow: { initial: 'new', transitions: { new: ['done'], done: [] } } })
  const order = await custom.orders.create(orderBody())
  t.match(await custom.orders.change({ id: order.id, actions: [{ type: 'cancelItem', index: 0, quantity: 1 }] }), { total: 1250 }, 'lineEdits: the initial status')
  await t.rejects(custom.orders.change({ id: order.id, actions: [{ type: 'returnItem', index: 0, quantity: 1 }] }),
    { code: 'ORDER_CHANGE_REFUSED', message: 'actions[0]: returnItem is allowed in no status, and the order is new' }, 'returns: none')
  const chosen = await buildApp(t, { changes: { lineEdits: ['shipped'], returns: ['pending'] } })
  const other = await chosen.orders.create(orderBody())
  t.match(await chosen.orders.change({ id: other.id, actions: [{ type: 'returnItem', index: 0, quantity: 2 }] }), { total: 0 })
  await t.rejects(chosen.orders.change({ id: other.id, actions: [{ type: 'addItem', item: { sku: 'B', quantity: 1, unitPrice: 1 } }] }),
    { message: 'actions[0]: addItem is allowed in shipped, and the order is pending' })
})
