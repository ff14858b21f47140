// A store-scoped reference page against a store-scoped status page, with 20,000 other stores' orders sharing the reference: memory and PostgreSQL (DATABASE_URL, else skipped).
// `npx tsx bench/store-reference-page.ts`: medians of 200 pages each; the target is a ratio of at most 3.
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { memoryStorage, type OrderStorage } from '../lib/index.js'
import { postgresStorage } from '../lib/storage/postgres/postgres-storage.js'
import { orderOf, storeOrder } from '../lib/storage/conformance/fixtures.js'

const OTHERS = 20_000
const minute = (i: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + i * 60_000).toISOString()
const storedOrder = (fields: { customerId: string, reference: string, store: string, createdAt: string }) => orderOf({
  id: randomUUID(), items: [{ sku: 'A-1', quantity: 1, unitPrice: 100 }], total: 100, statusHistory: [{ status: 'pending', at: fields.createdAt }], ...fields
})

async function fill (storage: OrderStorage): Promise<void> {
  for (let i = 0; i < OTHERS; i++) {
    await storeOrder(storage, storedOrder({ customerId: `cus_${i}`, reference: 'ref_shared', store: `shop_${i % 500}`, createdAt: minute(i) }))
  }
  for (let i = 0; i < 200; i++) {
    await storeOrder(storage, storedOrder({ customerId: `cus_eu_${i}`, reference: i % 10 === 0 ? 'ref_shared' : `ref_${i}`, store: 'eu', createdAt: minute(i) }))
  }
}

async function medianMs (run: () => Promise<unknown>): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < 220; i++) {
    const started = performance.now()
    await run()
    if (i >= 20) times.push(performance.now() - started)
  }
  return times.sort((a, b) => a - b)[times.length >> 1]!
}

async function measure (name: string, storage: OrderStorage): Promise<void> {
  await fill(storage)
  const reference = await medianMs(() => storage.list({ store: 'eu', reference: 'ref_shared', order: 'desc', limit: 21 }))
  const status = await medianMs(() => storage.list({ store: 'eu', statuses: ['pending'], order: 'desc', limit: 21 }))
  console.log(`${name}: store-scoped reference page ${reference.toFixed(3)} ms, store-scoped status page ${status.toFixed(3)} ms, ratio ${(reference / status).toFixed(2)}`)
}

await measure('memory', memoryStorage())
if (process.env.DATABASE_URL !== undefined) {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 })
  const table = `bench_store_ref_${process.pid}`
  const storage = postgresStorage({ client: pool, table })
  await storage.init!()
  try {
    await measure('postgres', storage)
  } finally {
    for (const suffix of ['', '_idempotency_keys', '_events', '_subscriptions', '_finished', '_dead_letters', '_schema']) await pool.query(`DROP TABLE IF EXISTS "${table}${suffix}"`)
    await pool.query(`DROP FUNCTION IF EXISTS "${table}_epoch"()`)
    await pool.end()
  }
}
