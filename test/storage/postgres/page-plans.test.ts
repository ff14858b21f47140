// Every page is one bounded walk of an index, whatever the filter and however the matching orders are
// spread: read from the plans PostgreSQL runs (EXPLAIN ANALYZE), not from timings.
import t from 'tap'
import { postgresStorage } from '../../../lib/storage/postgres/index.js'
import type { StorageListQuery } from '../../../lib/storage/types.js'
import { testDatabase } from '../../postgres-helper.js'

const db = await testDatabase(t)
const LIMIT = 21
const ROWS = 20_000

// A shop with history: the 30 oldest orders are "shipped" (a rare status, at the old end), the rest are
// pending, paid or cancelled; 50 customers, one order a minute; a reference on every fourth order, and
// one reference that the 40 oldest orders (of 40 customers) share. The statistics see it all.
const table = db.freshTable()
await postgresStorage({ client: db.client, table }).init!()
await db.client.query(`INSERT INTO "${table}" (id, customer_id, status, created_at, version, reference, document)
  SELECT md5(i::text), 'cus_' || (i % 50),
    CASE WHEN i <= 30 THEN 'shipped' ELSE (ARRAY['pending', 'paid', 'cancelled'])[1 + i % 3] END,
    to_char(timestamp '2026-01-01' + i * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 1,
    CASE WHEN i <= 40 THEN 'shared' WHEN i % 4 = 0 THEN 'ref_' || i END, '{}'
  FROM generate_series(1, ${ROWS}) AS i`, [])
const SHARED = 40
await db.client.query(`ANALYZE "${table}"`, [])

const minute = (i: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + i * 60_000).toISOString()
const some = (await db.client.query(`SELECT id FROM "${table}" ORDER BY id LIMIT 50`, [])).rows.map(row => row.id as string)

const filters: Record<string, Partial<StorageListQuery>> = {
  'no filter': {},
  customer: { customerId: 'cus_7' },
  'a rare status': { statuses: ['shipped'] },
  'a common status': { statuses: ['paid'] },
  'a rare and a common status': { statuses: ['shipped', 'cancelled'] },
  'a status no order has': { statuses: ['refunded'] },
  'customer and a rare status': { customerId: 'cus_7', statuses: ['shipped'] },
  'customer and three statuses': { customerId: 'cus_7', statuses: ['cancelled', 'paid', 'shipped'] },
  ids: { ids: some },
  'ids, statuses and customer': { ids: some, statuses: ['paid', 'shipped'], customerId: 'cus_7' },
  'created range': { createdFrom: minute(5000), createdTo: minute(5100) },
  // Few matches near one end of a long run of the same status: the walk must stop at the range's end.
  'a common status in a short range': { statuses: ['paid'], createdFrom: minute(100), createdTo: minute(110) },
  'a rare status and a range past it': { statuses: ['shipped'], createdFrom: minute(10), createdTo: minute(15000) },
  'customer, statuses and a range': { customerId: 'cus_7', statuses: ['paid', 'shipped'], createdFrom: minute(40), createdTo: minute(2000) },
  // Numbers follow insertion here: order 1234 is customer 34's, paid.
  'a number': { number: 1234 },
  'a number and every other filter': { number: 1234, customerId: 'cus_34', statuses: ['paid', 'shipped'], ids: some, createdTo: minute(ROWS) },
  'a reference and its customer': { reference: 'ref_400', customerId: 'cus_0' },
  'a reference many customers share': { reference: 'shared' },
  'a shared reference and statuses': { reference: 'shared', statuses: ['shipped', 'paid'] },
  'a shared reference and a range': { reference: 'shared', createdFrom: minute(10), createdTo: minute(20) }
}

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Actual Rows': number
  'Actual Loops': number
  'Rows Removed by Filter'?: number
  'Shared Hit Blocks': number
  'Shared Read Blocks': number
  Plans?: PlanNode[]
}
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)]

/** The plan of the statement `list` runs, executed with its parameters. */
async function planOfPage (query: StorageListQuery): Promise<PlanNode> {
  const statements: Array<[string, unknown[]]> = []
  await postgresStorage({ client: { query: async (text, params) => { statements.push([text, params]); return db.client.query(text, params) } }, table }).list(query)
  const [[text, params]] = statements as [[string, unknown[]]]
  const { rows: [row] } = await db.client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params)
  return row['QUERY PLAN'][0].Plan
}

t.test('every filter shape reads about limit + 1 rows per status walked, from an index, whatever the spread', async t => {
  for (const [label, filter] of Object.entries(filters)) {
    const lookup = filter.ids !== undefined || filter.number !== undefined || filter.reference !== undefined
    const walks = lookup ? 1 : Math.max(1, filter.statuses?.length ?? 1)
    for (const order of ['asc', 'desc'] as const) {
      for (const after of [undefined, { createdAt: minute(ROWS / 2), id: 'm' }]) {
        const what = `${label}, ${order}${after === undefined ? '' : ', after a cursor'}`
        const nodes = nodesOf(await planOfPage({ ...filter, order, after, limit: LIMIT }))
        const reads = nodes.filter(node => node['Relation Name'] === table)
        t.ok(reads.length > 0 && reads.every(node => node['Node Type'] !== 'Seq Scan'), `${what}: read from an index`)
        for (const node of reads) {
          // With ids, up to 50 orders are fetched by primary key and the rest of the filter applied; with
          // a reference alone, the orders of the customers that share it are walked and statuses applied.
          const removable = filter.number !== undefined ? 1 : filter.ids !== undefined ? some.length : filter.reference !== undefined ? SHARED : 0
          t.ok((node['Rows Removed by Filter'] ?? 0) <= removable, `${what}: no row read and thrown away`, { removed: node['Rows Removed by Filter'] })
          // (A status with fewer orders than about two pages may be read in one go and sorted.)
          t.ok(node['Actual Rows'] * node['Actual Loops'] <= Math.max(2 * LIMIT, removable), `${what}: at most about a page per walk`, { rows: node['Actual Rows'] })
          // An index walk that ran on past the page's end would touch many index pages for few rows
          // (with ids, each is looked up by primary key).
          const blocks = node['Shared Hit Blocks'] + node['Shared Read Blocks']
          t.ok(blocks <= 2 * LIMIT + 8 + 4 * removable, `${what}: stops at the page's end`, { blocks })
        }
        for (const sort of nodes.filter(node => node['Node Type'] === 'Sort')) {
          t.ok(sort['Actual Rows'] <= walks * 2 * LIMIT, `${what}: sorts no more than the walks read`, { rows: sort['Actual Rows'] })
        }
      }
    }
  }
})
