// The PostgreSQL feed: read below the oldest running transaction, so a late commit is never skipped.
import t from 'tap'
import { createdEvent } from '../../../lib/feed/events.js'
import type { OrderEvent } from '../../../lib/index.js'
import { postgresStorage } from '../../../lib/storage/postgres/postgres-storage.js'
import type { OrderStorage } from '../../../lib/storage/order-storage.js'
import { storedOrder } from '../../helper.js'
import { planOf, testDatabase } from '../../postgres-helper.js'

const db = await testDatabase(t)

/** Stores a new order with its event; returns the event. */
async function store (storage: OrderStorage, customerId: string): Promise<OrderEvent> {
  const event = createdEvent(storedOrder({ customerId }))
  await storage.create(event.order, event)
  return event
}

/** Follows the feed from the start, passing the last id, until `count` events or 5 s. */
async function walkFeed (storage: Required<Omit<OrderStorage, 'replicas'>>, count: number): Promise<string[]> {
  const seen: OrderEvent[] = []
  const deadline = Date.now() + 5_000
  while (seen.length < count && Date.now() < deadline) {
    const page = (await storage.listEvents({ after: seen.at(-1)?.id, limit: 100 }))!
    seen.push(...page)
    if (page.length === 0) await new Promise(resolve => setTimeout(resolve, 20))
  }
  return seen.map(event => event.order.customerId)
}

t.test('a reader never skips an event whose transaction commits after a later one\'s', async t => {
  const table = db.freshTable()
  const storage = postgresStorage({ client: db.client, table })
  await storage.init!()
  // The first writer's transaction stays open while the second writes and commits.
  const first = await db.openTransaction(async client => { await store(postgresStorage({ client, table }), 'cus_first') })
  await store(storage, 'cus_second')
  t.same(await storage.listEvents({ limit: 10 }), [], 'the committed second event waits while the first may still commit')
  const walk = walkFeed(storage, 2)
  await new Promise(resolve => setTimeout(resolve, 100))
  await first.commit()
  t.same(await walk, ['cus_first', 'cus_second'], 'a reader passing the last id sees both, in transaction order')
})

t.test('a subscription from now excludes every event committed before it started, even above the horizon', async t => {
  const table = db.freshTable()
  const storage = postgresStorage({ client: db.client, table })
  await storage.init!()
  const open = await db.openTransaction(async client => { await store(postgresStorage({ client, table }), 'cus_commits_after_start') })
  await store(storage, 'cus_committed_before_start')
  t.same(await storage.lease({ name: 'now', holder: 'h', ttl: 60_000, from: 'now' }), { held: true, lastEventId: null })
  await open.commit()
  const later = await store(storage, 'cus_later')
  const deadline = Date.now() + 5_000
  let events: OrderEvent[] = []
  while (events.length < 2 && Date.now() < deadline) events = await storage.readSubscription('now', 10)
  t.same(events.map(event => event.order.customerId), ['cus_commits_after_start', 'cus_later'],
    'what committed after the start is delivered, in feed order; what committed before is not')
  t.equal(await storage.checkpoint('now', 'h', null, events[0]!.id), true)
  t.same((await storage.readSubscription('now', 10)).map(event => event.id), [later.id])
})

t.test('a feed page, a subscription page and a purge are index ranges at 20 000 events', async t => {
  const table = db.freshTable()
  const storage = postgresStorage({ client: db.client, table })
  await storage.init!()
  await db.client.query(`INSERT INTO "${table}_events" (id, aggregatetype, aggregateid, type, payload, at)
    SELECT gen_random_uuid(), 'order', md5(i::text), 'created', '{}', '2026-01-01T00:00:00.000Z' FROM generate_series(1, 20000) AS i`, [])
  await db.client.query(`ANALYZE "${table}_events"`, [])
  const { rows: [middle] } = await db.client.query(`SELECT id::text FROM "${table}_events" ORDER BY tx, seq OFFSET 10000 LIMIT 1`, [])
  await storage.lease({ name: 'from-start', holder: 'h', ttl: 60_000, from: 'start' })
  await storage.lease({ name: 'from-now', holder: 'h', ttl: 60_000, from: 'now' })

  const plans: Array<[string, (storage: Required<Omit<OrderStorage, 'replicas'>>) => Promise<unknown>]> = [
    ['the first feed page', storage => storage.listEvents({ limit: 100 })],
    ['a feed page after an event', storage => storage.listEvents({ after: middle.id, limit: 100 })],
    ['a subscription from the start', storage => storage.readSubscription('from-start', 100)],
    ['a subscription from now', storage => storage.readSubscription('from-now', 100)],
    ['a purge', storage => storage.purgeEvents('2025-01-01T00:00:00.000Z', 200)]
  ]
  const events = `${table}_events`
  const nodes = (plan: any): any[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)]
  // Rows of the events table below a node, unless a Limit stands between (sorting a bounded page is
  // fine) or the read is the one-row lookup of an event by id.
  const unboundedReads = (plan: any): boolean => (plan.Plans ?? []).some((child: any) => child['Node Type'] !== 'Limit' &&
    ((child['Relation Name'] === events && child['Index Name'] !== `${events}_pkey`) || unboundedReads(child)))
  for (const [label, read] of plans) {
    const all = nodes(await planOf(db.client, client => read(postgresStorage({ client, table }))))
    const reads = all.filter(node => node['Relation Name'] === events && node['Node Type'] !== 'ModifyTable')
    t.ok(reads.length > 0 && reads.every(node => node['Node Type'] === 'Index Scan' || node['Node Type'] === 'Index Only Scan'),
      `${label}: every read of the events table is an index scan`, { reads: reads.map(node => node['Node Type']) })
    t.notOk(all.some(node => node['Node Type'] === 'Sort' && unboundedReads(node)), `${label}: no sort of the events table, only of a page`)
  }
})
