// On PostgreSQL, custom fields live in the order's json document: no column of their own, no migration.
import Fastify from 'fastify'
import t from 'tap'
import orderPlugin from '../../../lib/index.js'
import { postgresStorage } from '../../../lib/storage/postgres/postgres-storage.js'
import { address, bodyWith, Gift, Shipping } from '../../custom-field-schemas.js'
import { testDatabase } from '../../postgres-helper.js'

const db = await testDatabase(t)

t.test('custom fields are kept in the stored document, and the table gets no column for them', async t => {
  const table = db.freshTable()
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage: postgresStorage({ client: db.client, table }), customFields: { order: Shipping, item: Gift } })
  const fields = { address, weightKg: 0.1, parcels: [{ ref: 'p-1', grams: Number.MAX_SAFE_INTEGER }] }
  const response = await app.inject({ method: 'POST', url: '/order/createOrder', payload: bodyWith(fields, { giftNote: 'Joyeux anniversaire 🎂' }) })
  t.equal(response.statusCode, 201)

  const { rows } = await db.client.query(`SELECT document::text AS document FROM "${table}"`, [])
  const document = JSON.parse(rows[0].document)
  t.same(document.customFields, fields)
  t.same(document.items[0].customFields, { giftNote: 'Joyeux anniversaire 🎂' })
  const columns = await db.client.query(
    'SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position', [table])
  t.same(columns.rows.map(row => row.column_name), ['id', 'customer_id', 'status', 'created_at', 'version', 'document', 'number', 'reference', 'store', 'balance_sign'])
})
