import t from 'tap'
import { buildApp, orderBody, post } from './helper.js'

t.test('createOrder returns 201 with the order the server computed', async t => {
  const app = await buildApp(t)
  const { status, body } = await post(app, 'createOrder', orderBody({
    items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }, { sku: 'B-2', quantity: 3, unitPrice: 99 }]
  }))
  t.equal(status, 201)
  t.match(body, {
    customerId: 'cus_42',
    status: 'pending',
    currency: 'EUR',
    total: 2 * 1250 + 3 * 99,
    metadata: { channel: 'web' },
    version: 1,
    statusHistory: [{ status: 'pending', at: body.createdAt }]
  })
  t.type(body.id, 'string')
  t.equal(body.createdAt, body.updatedAt)
  t.equal(new Date(body.createdAt).toISOString(), body.createdAt, 'ISO 8601 UTC with milliseconds')
  t.same(body.items[1], { sku: 'B-2', quantity: 3, unitPrice: 99 }, 'name stays optional')
})
