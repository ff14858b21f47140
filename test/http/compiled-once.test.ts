// Validators and response serializers compiled once per process: every app still checks and answers with its own schemas.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { compileStrict } from '../../lib/http/validation.js'
import { buildApp, createOrder, post } from '../helper.js'

t.test('a schema of the same text is compiled once, and a schema with an $id gets a validator of its own', async t => {
  const first = compileStrict(Type.Object({ sku: Type.String() }))
  t.equal(compileStrict(Type.Object({ sku: Type.String() })), first, 'the same text, another object: the same validator')
  t.notOk(first({ sku: 1 }), 'it still checks')

  // Two hosts may give two different schemas one $id: each compiles and checks its own.
  const named = compileStrict(Type.Object({ gift: Type.String() }, { $id: 'Extra' }))
  const renamed = compileStrict(Type.Object({ gift: Type.Integer() }, { $id: 'Extra' }))
  t.ok(named({ gift: 'card' }))
  t.notOk(renamed({ gift: 'card' }))
  t.ok(renamed({ gift: 2 }))
})

t.test('the oldest validators make room for new ones, and a schema compiled again checks as before', async t => {
  const schemaOf = (index: number) => Type.Object({ [`field${index}`]: Type.Integer() })
  const first = compileStrict(schemaOf(0))
  for (let index = 1; index <= 300; index++) compileStrict(schemaOf(index))
  const again = compileStrict(schemaOf(0))
  t.not(again, first, 'compiled anew once it was let go')
  t.ok(again({ field0: 1 }))
  t.notOk(again({ field0: 'one' }))
})

t.test('apps with different workflows each answer with their own statuses, however many the process builds', async t => {
  // Each workflow changes the order's schema, so each app's routes need serializers of their own.
  const apps = []
  for (let index = 0; index < 30; index++) {
    const workflow = { initial: `new${index}`, transitions: { [`new${index}`]: [`done${index}`], [`done${index}`]: [] } }
    apps.push({ index, app: await buildApp(t, { workflow }) })
  }
  for (const { index, app } of [apps[0]!, apps[29]!]) {
    const order = await createOrder(app)
    t.equal(order.status, `new${index}`)
    const moved = await post(app, 'updateOrderStatus', { id: order.id, status: `done${index}` })
    t.equal(moved.status, 200)
    t.equal(moved.body.status, `done${index}`)
    const page = await post(app, 'getOrderList', {})
    t.same(page.body.items.map((item: { id: string }) => item.id), [order.id])
  }
})
