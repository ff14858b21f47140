import { join } from 'node:path'
import t from 'tap'
import { createExampleStorage } from '../../../examples/storage.js'
import type { Order } from '../../../lib/index.js'
import { storeOrder } from '../../helper.js'

t.test('the example storage keeps orders in its PGlite data directory across a restart', async t => {
  const env = { DATA_DIR: join(t.testdir(), 'orders-data') }
  const createdAt = '2026-01-01T10:00:00.000Z'
  const order: Order = {
    id: 'ord_1',
    number: 0,
    customerId: 'cus_42',
    status: 'pending',
    currency: 'EUR',
    items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }],
    total: 2500,
    metadata: { channel: 'web' },
    version: 1,
    statusHistory: [{ status: 'pending', at: createdAt }],
    createdAt,
    updatedAt: createdAt
  }

  const before = await createExampleStorage(env)
  await before.storage.init!()
  await storeOrder(before.storage, order, { key: 'k', fingerprint: 'fp', expiresAt: '2026-01-02T10:00:00.000Z' })
  await before.close()

  const after = await createExampleStorage(env)
  t.teardown(() => after.close())
  await after.storage.init!()
  t.same(await after.storage.get(order.id), order, 'the order is still there')
  t.same(await storeOrder(after.storage, { ...order, id: 'ord_2' }, { key: 'k', fingerprint: 'fp', expiresAt: '2026-01-02T10:00:00.000Z' }),
    { created: false, order, fingerprint: 'fp' }, 'and so is its idempotency key')
})
