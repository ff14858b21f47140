// Changes held to account: who may change what, orders and answers that stay bounded, actions that are objects, lines with custom fields, answers that share nothing with the store, a cancel that cancels, and a ledger kept when changes are turned off.
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import t from 'tap'
import orderPlugin, { type ChangeAction, type OrderEvent, type OrderPluginOptions, type OrderWithChanges } from '../../lib/index.js'
import { buildApp, createOrder, orderBody, post, testStorage, waitForEvents } from '../helper.js'

const pay = (amount: number, reference: string): ChangeAction => ({ type: 'recordPayment', amount, reference })
const refund = (amount: number, reference: string): ChangeAction => ({ type: 'recordRefund', amount, reference })

// The README's authorize: a staff token sees and does everything, any other caller is the customer it names.
const authorize: OrderPluginOptions['authorize'] = request => request.headers.authorization === 'Bearer staff'
  ? true
  : { customerId: String(request.headers['x-customer'] ?? 'anonymous') }
const asCustomer = (customerId: string) => ({ 'x-customer': customerId })
const asStaff = { authorization: 'Bearer staff' }

t.test('a customer may not set a price or record a payment: 403 ORDER_FORBIDDEN naming the action, before anything is read', async t => {
  const app = await buildApp(t, { authorize, changes: { route: true } })
  const order = await app.orders.create(orderBody({ customerId: 'alice', items: [{ sku: 'TV', quantity: 1, unitPrice: 79900 }] }))
  for (const action of [{ type: 'setUnitPrice', index: 0, unitPrice: 0 }, pay(79900, 'pi_fake'), refund(1, 're_1'), { type: 'addItem', item: { sku: 'X', quantity: 1, unitPrice: 0 } }]) {
    const answer = await post(app, 'changeOrder', { id: order.id, actions: [action] }, asCustomer('alice'))
    t.equal(answer.status, 403, action.type)
    t.equal(answer.body.code, 'ORDER_FORBIDDEN')
    t.match(answer.body.message, `customers may not ${action.type}`)
  }
  const second = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'cancelItem', index: 0, quantity: 1 }, pay(1, 'p')] }, asCustomer('alice'))
  t.match(second.body, { code: 'ORDER_FORBIDDEN', message: /customers may not cancelItem/ }, 'the first action a customer may not use is named')
  const unknown = await post(app, 'changeOrder', { id: 'no_such_order', actions: [pay(1, 'p')] }, asCustomer('alice'))
  t.equal(unknown.status, 403, 'refused before the order is looked for: no 404 tells what exists')
  const preview = await post(app, 'changeOrder', { id: order.id, preview: true, actions: [pay(1, 'p')] }, asCustomer('alice'))
  t.equal(preview.status, 403, 'a preview too')
  await t.rejects(app.orders.change({ id: order.id, actions: [pay(1, 'p')] }, { scope: { customerId: 'alice' } }), { code: 'ORDER_FORBIDDEN' }, 'app.orders with a customer scope alike')
  const [stored] = (await app.orders.list({ filter: { ids: [order.id] } })).items as OrderWithChanges[]
  t.match(stored, { version: 1, total: 79900, paid: 0, balance: 79900, payments: [], changes: [] }, 'nothing was changed')
  const staff = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'setUnitPrice', index: 0, unitPrice: 69900 }, pay(69900, 'pi_1')] }, asStaff)
  t.equal(staff.status, 200, 'staff may use every action')
  t.match(staff.body, { total: 69900, paid: 69900, balance: 0 })
})

t.test('changes.customerActions lets customers use those actions on their own orders, and only those', async t => {
  const app = await buildApp(t, { authorize, changes: { route: true, customerActions: ['cancelItem'] } })
  const order = await app.orders.create(orderBody({ customerId: 'alice', items: [{ sku: 'MUG', quantity: 2, unitPrice: 1250 }] }))
  const cancelled = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'cancelItem', index: 0, quantity: 1 }] }, asCustomer('alice'))
  t.equal(cancelled.status, 200)
  t.match(cancelled.body, { total: 1250, items: [{ cancelled: 1 }], changes: [{ actions: [{ type: 'cancelItem' }] }] })
  t.equal((await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'cancelItem', index: 0, quantity: 1 }] }, asCustomer('bob'))).status, 404, 'another customer\'s order is not found')
  t.equal((await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'setQuantity', index: 0, quantity: 5 }] }, asCustomer('alice'))).status, 403)
})

t.test('maxChanges and maxPayments bound an order: the change past either is 409 naming the option; a retried notice is still skipped', async t => {
  const app = await buildApp(t, { changes: { route: true, maxChanges: 3, maxPayments: 2 } })
  const order = await createOrder(app)
  t.equal((await post(app, 'changeOrder', { id: order.id, actions: [pay(100, 'p1'), pay(100, 'p2')] })).status, 200)
  const third = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'setQuantity', index: 0, quantity: 3 }, pay(100, 'p3')] })
  t.equal(third.status, 409)
  t.equal(third.body.code, 'ORDER_CHANGE_REFUSED')
  t.equal(third.body.message, 'actions[1]: an order holds at most 2 payments and refunds (changes.maxPayments)')
  const retried = await post(app, 'changeOrder', { id: order.id, actions: [pay(100, 'p2')] })
  t.equal(retried.status, 200, 'a provider\'s retried notice is skipped, not refused')
  t.equal(retried.body.version, 2, 'and stores nothing')
  t.equal((await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'setQuantity', index: 0, quantity: 3 }] })).status, 200)
  t.equal((await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'setQuantity', index: 0, quantity: 4 }] })).status, 200)
  const fourth = await post(app, 'changeOrder', { id: order.id, preview: true, actions: [{ type: 'setQuantity', index: 0, quantity: 5 }] })
  t.match(fourth.body, { code: 'ORDER_CHANGE_REFUSED', message: 'an order holds at most 3 changes (changes.maxChanges)' }, 'a preview gets the same refusal')
  await t.rejects(app.orders.change({ id: order.id, actions: [{ type: 'setUnitPrice', index: 0, unitPrice: 1 }] }), { code: 'ORDER_CHANGE_REFUSED', message: /changes\.maxChanges/ })
  const [stored] = (await app.orders.list({ filter: { ids: [order.id] } })).items as OrderWithChanges[]
  t.equal(stored!.changes.length, 3)
  t.equal(stored!.payments.length, 2)
})

t.test('with the defaults an order holds 100 changes and 100 payments', async t => {
  const app = await buildApp(t, { changes: true })
  const order = await createOrder(app)
  for (let i = 0; i < 100; i++) await app.orders.change({ id: order.id, actions: [pay(1, `p${i}`)] })
  await t.rejects(app.orders.change({ id: order.id, actions: [{ type: 'setQuantity', index: 0, quantity: 3 }] }), { message: 'an order holds at most 100 changes (changes.maxChanges)' })
  await t.rejects(app.orders.change({ id: order.id, actions: [pay(1, 'p100')] }), { message: 'actions[0]: an order holds at most 100 payments and refunds (changes.maxPayments)' })
})

t.test('an action that is not an object is a 400 in any position, on the route and on app.orders.change', async t => {
  const app = await buildApp(t, { changes: { route: true } })
  const order = await createOrder(app)
  for (const bad of [null, 1, 'x', [], true]) {
    for (const actions of [[bad], [pay(1, 'p'), bad]]) {
      const answer = await post(app, 'changeOrder', { id: order.id, actions })
      t.equal(answer.status, 400, `${JSON.stringify(actions)}: 400`)
      t.equal(answer.body.code, 'FST_ERR_VALIDATION')
      t.match(answer.body.message, `body/actions/${actions.length - 1} must be object`)
      await t.rejects(app.orders.change({ id: order.id, actions: actions as ChangeAction[] }), { code: 'FST_ERR_VALIDATION', message: `actions/${actions.length - 1} must be object` })
    }
  }
  t.equal((await app.orders.list()).items[0]!.version, 1, 'nothing was stored')
})

t.test('addItem follows createOrder\'s rules for custom fields: required, validated, stored', async t => {
  const Gift = Type.Object({ giftNote: Type.String({ maxLength: 20 }) })
  const app = await buildApp(t, { customFields: { item: Gift }, changes: { route: true } })
  const order = await createOrder(app, { items: [{ sku: 'A-1', quantity: 1, unitPrice: 100, customFields: { giftNote: 'hi' } }] } as never)
  const line = { sku: 'B-2', quantity: 1, unitPrice: 200 }
  const without = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'addItem', item: line }] })
  t.equal(without.status, 400, 'a line without the required custom fields is refused')
  t.match(without.body.message, 'customFields')
  const wrong = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'addItem', item: { ...line, customFields: { giftNote: 'x'.repeat(21) } } }] })
  t.equal(wrong.status, 400, 'and one whose custom fields break the schema')
  const deep = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'addItem', item: { ...line, customFields: { giftNote: 'x', extra: JSON.parse('['.repeat(40) + ']'.repeat(40)) } } }] })
  t.equal(deep.status, 400, 'and one nested past what a storage keeps')
  const added = await post(app, 'changeOrder', { id: order.id, actions: [{ type: 'addItem', item: { ...line, customFields: { giftNote: 'for Sam' } } }] })
  t.equal(added.status, 200)
  t.same(added.body.items[1], { ...line, customFields: { giftNote: 'for Sam' } })
  t.same(added.body.changes[0].actions, [{ type: 'addItem', item: { ...line, customFields: { giftNote: 'for Sam' } } }], 'the change records the line as added')
  const viaService = await app.orders.change({ id: order.id, actions: [{ type: 'addItem', item: { sku: 'C-3', quantity: 1, unitPrice: 1, customFields: { giftNote: 'x' } } } as ChangeAction] })
  t.same((viaService.items[2] as { customFields?: object }).customFields, { giftNote: 'x' })
  const [stored] = (await app.orders.list({ filter: { ids: [order.id] } })).items
  t.same(stored!.items.map(item => (item as { customFields?: object }).customFields), [{ giftNote: 'hi' }, { giftNote: 'for Sam' }, { giftNote: 'x' }])
})

t.test('addItem without an item schema\'s required keys gets {} as createOrder does', async t => {
  const app = await buildApp(t, { customFields: { item: Type.Object({ note: Type.Optional(Type.String()) }) }, changes: true })
  const order = await createOrder(app)
  const changed = await app.orders.change({ id: order.id, actions: [{ type: 'addItem', item: { sku: 'B', quantity: 1, unitPrice: 1 } }] })
  t.same((changed.items[1] as { customFields?: object }).customFields, {})
})

t.test('a hook or listener that edits what it is handed changes nothing stored: a retried notice is still skipped', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  // Blanks the payments of every order answered, alone or in a page.
  app.addHook('preSerialization', async (_request, _reply, payload: { payments?: unknown[], nextCursor?: unknown, items?: Array<{ payments?: unknown[] }> }) => {
    if (payload.payments !== undefined) payload.payments = []
    if (payload.nextCursor !== undefined) for (const order of payload.items!) order.payments = []
    return payload
  })
  await app.register(orderPlugin, { storage: await testStorage(t), changes: { route: true } })
  const order = await createOrder(app)
  const paid = await post(app, 'changeOrder', { id: order.id, actions: [pay(1000, 'pi_1')] })
  t.same(paid.body.payments, [], 'the hook blanked its answer')
  t.same((await post(app, 'getOrderList', {})).body.items[0].payments, [], 'and the page')
  const again = await post(app, 'changeOrder', { id: order.id, actions: [pay(1000, 'pi_1')] })
  t.equal(again.body.version, 2, 'the provider\'s retried notice is skipped: the store still has the payment')
  t.equal(again.body.paid, 1000)
  const [stored] = (await app.orders.list({ filter: { ids: [order.id] } })).items as OrderWithChanges[]
  t.match(stored!.payments, [{ reference: 'pi_1', amount: 1000 }])
})

t.test('what app.orders, listeners and the feed hand out is never the stored object: a copy of it may be edited freely', async t => {
  const storage = await testStorage(t)
  const app = await buildApp(t, { storage, changes: true })
  const seen: OrderEvent[] = []
  app.orders.on('changed', event => { seen.push(event) })
  const order = await createOrder(app)
  await app.orders.change({ id: order.id, actions: [pay(500, 'pi_1')] })
  const { items: [listed] } = await app.orders.list({ filter: { ids: [order.id] } })
  const copy = { ...listed!, status: 'shipped', payments: [] }
  t.equal(copy.status, 'shipped')
  const [created, changed] = await waitForEvents(app, 2)
  t.not(created!.order, changed!.order, 'each event has its own order')
  t.ok(Object.isFrozen(seen[0]) && Object.isFrozen(seen[0]!.order), 'a listener\'s event is frozen')
  const stored = await storage.get(order.id) as OrderWithChanges
  const again = await storage.get(order.id) as OrderWithChanges
  t.not(stored, again, 'the storage hands out a new object each time')
  stored.payments = []
  ;(stored as { status: string }).status = 'lost'
  t.match(await storage.get(order.id), { status: 'pending', payments: [{ reference: 'pi_1' }] }, 'an edit of what it handed out stays there')
})

t.test('a move into cancelled cancels every open quantity in the same step: one change entry, one event; the balance says what is owed back', async t => {
  const app = await buildApp(t, { changes: { route: true } })
  const order = await createOrder(app, { items: [{ sku: 'TV', quantity: 1, unitPrice: 30000 }, { sku: 'CABLE', quantity: 4, unitPrice: 2500 }] })
  await post(app, 'changeOrder', { id: order.id, actions: [pay(40000, 'pi_1'), { type: 'cancelItem', index: 1, quantity: 1 }] })
  const [, changedEvent] = await waitForEvents(app, 2)
  const moved = await post(app, 'updateOrderStatus', { id: order.id, status: 'cancelled', reason: 'customer called' })
  t.equal(moved.status, 200)
  t.match(moved.body, { status: 'cancelled', version: 4, total: 0, paid: 40000, balance: -40000 })
  t.same(moved.body.items.map((item: { cancelled?: number }) => item.cancelled), [1, 4], 'every line cancelled in full')
  const entry = moved.body.changes.at(-1)
  t.same(entry.actions, [{ type: 'cancelItem', index: 0, quantity: 1 }, { type: 'cancelItem', index: 1, quantity: 3 }], 'one entry of cancelItem actions, for what was open')
  t.match(entry, { version: 3, reason: 'customer called', totalBefore: 37500, totalAfter: 0 })
  t.equal(moved.body.version, moved.body.statusHistory.length + moved.body.changes.length)
  const events = await waitForEvents(app, 1, changedEvent!.id)
  t.same((await app.orders.listEvents({ after: events[0]!.id })).items, [], 'the move\'s one event')
  t.match(events[0], { type: 'statusChanged', from: 'pending', order: { status: 'cancelled', total: 0, balance: -40000 } })
  t.same((await post(app, 'getOrderList', { filter: { balance: 'owed' } })).body.items.map((listed: { id: string }) => listed.id), [order.id], 'listed as owed back')
  t.same((await post(app, 'getOrderList', { filter: { balance: 'due' } })).body.items, [], 'never as due')
  const settled = await post(app, 'changeOrder', { id: order.id, actions: [refund(40000, 're_1')] })
  t.match(settled.body, { paid: 0, balance: 0 }, 'the refund settles it')
})

t.test('a move into cancelled with nothing open, or into another status, leaves the lines as they are', async t => {
  const app = await buildApp(t, { changes: { route: true } })
  const order = await createOrder(app)
  const paid = await app.orders.updateStatus({ id: order.id, status: 'paid' })
  t.match(paid, { version: 2, total: 2500, changes: [] })
  await app.orders.change({ id: order.id, actions: [{ type: 'cancelItem', index: 0, quantity: 2 }] })
  const cancelled = await app.orders.updateStatus({ id: order.id, status: 'cancelled' }) as OrderWithChanges
  t.equal(cancelled.version, 4, 'nothing open: the move alone')
  t.equal(cancelled.changes.length, 1)
})

t.test('changes.cancelling names the statuses that cancel; [] leaves a cancelled order\'s lines owed', async t => {
  const none = await buildApp(t, { changes: { cancelling: [] } })
  const order = await createOrder(none)
  t.match(await none.orders.updateStatus({ id: order.id, status: 'cancelled' }), { version: 2, total: 2500, balance: 2500 })
  const workflow = { initial: 'new', transitions: { new: ['void', 'done'], void: [], done: [] } }
  const custom = await buildApp(t, { workflow, changes: { cancelling: ['void'] } })
  const other = await createOrder(custom)
  t.match(await custom.orders.updateStatus({ id: other.id, status: 'void' }), { version: 3, total: 0, items: [{ cancelled: 2 }] })
  const noCancelled = await buildApp(t, { workflow, changes: true })
  const kept = await createOrder(noCancelled)
  t.match(await noCancelled.orders.updateStatus({ id: kept.id, status: 'void' }), { version: 2, total: 2500 }, 'without a cancelled status nothing cancels by default')
})

t.test('register refuses customerActions, maxChanges, maxPayments or cancelling that cannot work, naming what to change', async t => {
  const cases: Array<[object, RegExp]> = [
    [{ customerActions: 'cancelItem' }, /changes\.customerActions must be an array of action types \(addItem, setQuantity/],
    [{ customerActions: ['cancelItem', 'refundAll'] }, /"refundAll" is not one/],
    [{ maxChanges: 0 }, /changes\.maxChanges must be an integer from 1 to 10000, got 0/],
    [{ maxPayments: 1.5 }, /changes\.maxPayments must be an integer from 1 to 10000, got 1\.5/],
    [{ cancelling: ['voided'] }, /changes\.cancelling must be an array of statuses of the workflow .*"voided" is not one/]
  ]
  for (const [changes, message] of cases) {
    await t.rejects(buildApp(t, { changes } as OrderPluginOptions), { code: 'ORDER_INVALID_OPTIONS', message }, JSON.stringify(changes))
  }
})

t.test('turning changes off hides nothing stored: counters, totals and the ledger stay in every answer and event', async t => {
  const storage = await testStorage(t)
  const on = await buildApp(t, { storage, changes: true })
  const changed = await createOrder(on, { items: [{ sku: 'A', quantity: 2, unitPrice: 1000 }, { sku: 'B', quantity: 1, unitPrice: 500 }] })
  await on.orders.change({ id: changed.id, actions: [{ type: 'cancelItem', index: 0, quantity: 2 }, pay(500, 'pi_1')] })
  const untouched = await createOrder(on)
  const off = await buildApp(t, { storage })
  const page = await post(off, 'getOrderList', { filter: { ids: [changed.id, untouched.id] } })
  const shown = page.body.items.find((order: { id: string }) => order.id === changed.id)
  t.match(shown, { total: 500, paid: 500, balance: 0, payments: [{ reference: 'pi_1' }], changes: [{ version: 2 }] })
  t.same(shown.items[0], { sku: 'A', quantity: 2, unitPrice: 1000, cancelled: 2 }, 'the line says why its quantity costs nothing')
  const plain = page.body.items.find((order: { id: string }) => order.id === untouched.id)
  t.notOk('paid' in plain || 'payments' in plain || 'changes' in plain || 'balance' in plain, 'an order never changed nor paid shows as with changes off')
  const moved = await post(off, 'updateOrderStatus', { id: changed.id, status: 'paid' })
  t.match(moved.body, { version: 3, total: 500, paid: 500, changes: [{ version: 2 }] }, 'a move keeps the ledger')
  const events = (await waitForEvents(off, 4)).filter(event => event.order.id === changed.id)
  t.match(events.at(-1), { type: 'statusChanged', order: { total: 500, paid: 500, items: [{ cancelled: 2 }] } })
  t.equal((await post(off, 'getOrderList', { filter: { balance: 'due' } })).status, 400, 'filter.balance goes away')
})
