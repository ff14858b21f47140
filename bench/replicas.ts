// Reads from replicas on a real primary and a standby replaying 0.5 s behind: the share of pages the standby serves
// under 1,000 customers who write about every 5 s and read 9 times as often (every page after a caller's own
// write checked for it), pages through the standby against the primary alone, writes with replicas on against
// off, and the primary's CPU per page either way. Run by bench/run.ts as
// `node --import tsx bench/replicas.ts [--quick]`; needs PostgreSQL 15's server programs (tests/replica-cluster.ts).
import { readdirSync, readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import Fastify, { type FastifyInstance } from 'fastify'
import type pg from 'pg'
import { missingServer, startCluster, type Cluster } from '../test/replica-cluster.js'
import { formatCount, median, printTable } from './report.js'

const { values: flags } = parseArgs({ options: { quick: { type: 'boolean', default: false }, rounds: { type: 'string' } } })
const rounds = Number(flags.rounds ?? (flags.quick ? 3 : 7))
const roundSeconds = flags.quick ? 2 : 4
const simulationSeconds = flags.quick ? 15 : 40
const CUSTOMERS = 1000
const WRITE_EVERY = 5000
const READS_PER_WRITE = 9
const CONCURRENCY = 10

const lib = process.env.BENCH_LIB ?? '../dist/'
const { orderPlugin } = await import(`${lib}index.js`) as typeof import('../lib/index.js')
const { postgresStorage } = await import(`${lib}storage/postgres/postgres-storage.js`) as typeof import('../lib/storage/postgres/postgres-storage.js')

const missing = await missingServer()
if (missing !== undefined) {
  console.log(`replicas: skipped, needs PostgreSQL's server programs: ${missing}`)
  process.exit(0)
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))
const body = (customerId: string) => ({ customerId, currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unitPrice: 990 }] })

/** Nanoseconds of CPU the postmaster `pid` and its children (every backend, the WAL sender) have used. */
function cpuOf (pid: number): number {
  let total = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (Number(entry) !== pid && parent !== pid) continue
      total += Number(readFileSync(`/proc/${entry}/schedstat`, 'utf8').split(' ')[0])
    } catch {}
  }
  return total
}

let tables = 0
async function appOn (primary: pg.Pool, replicas: pg.Pool[] | undefined): Promise<{ app: FastifyInstance, pages: { replica: number, primary: number } }> {
  const storage = postgresStorage({ client: primary, table: `bench_replicas_${tables++}`, ...replicas === undefined ? {} : { replicas } })
  const pages = { replica: 0, primary: 0 }
  const reads = storage.replicas
  if (reads !== undefined) {
    const list = reads.list
    reads.list = async (query, view) => {
      const page = await list(query, view)
      pages[page.replica ? 'replica' : 'primary']++
      return page
    }
  }
  const app = Fastify()
  await app.register(orderPlugin, { storage })
  await app.ready()
  return { app, pages }
}

/** Waits until the standby has replayed what the primary has now. */
async function caughtUp (primary: pg.Pool, standby: pg.Pool): Promise<void> {
  const { rows: [{ lsn }] } = await primary.query('SELECT pg_current_wal_lsn() AS lsn')
  while ((await standby.query('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [lsn])).rows[0].done !== true) await sleep(50)
}

/** The customers' load: each one, at random intervals, writes (1 in 10) or reads its first page and checks its own last write is on it. */
async function simulate (primary: pg.Pool, standby: pg.Pool): Promise<void> {
  const { app, pages } = await appOn(primary, [standby])
  await caughtUp(primary, standby)
  await sleep(300)
  let writes = 0
  let checked = 0
  let missed = 0
  let failed = 0
  const end = Date.now() + simulationSeconds * 1000
  const mean = WRITE_EVERY / (READS_PER_WRITE + 1)
  await Promise.all(Array.from({ length: CUSTOMERS }, async (_, index) => {
    const customerId = `cus_${index}`
    const scope = { customerId }
    let last: string | undefined
    await sleep(Math.random() * WRITE_EVERY)
    while (Date.now() < end) {
      try {
        if (Math.random() < 1 / (READS_PER_WRITE + 1)) {
          last = (await app.orders.create(body(customerId), { scope })).id
          writes++
        } else {
          const page = await app.orders.list({ limit: 5 }, { scope })
          if (last !== undefined) {
            checked++
            if (page.items[0]?.id !== last) missed++
          }
        }
      } catch {
        failed++
      }
      await sleep(-Math.log(1 - Math.random()) * mean)
    }
  }))
  await app.close()
  const total = pages.replica + pages.primary
  console.log(`1,000 customers for ${simulationSeconds} s, the standby replaying 0.5 s behind: ${formatCount(writes / simulationSeconds)} writes/s, ${formatCount(total / simulationSeconds)} pages/s`)
  printTable(['', 'figure', 'target'], [
    ['pages served by the standby', `${(100 * pages.replica / total).toFixed(1)}% (${pages.replica} of ${total})`, '≥ 80%'],
    ['pages after the caller\'s own write, checked', String(checked), 'every one'],
    ['of those without the write', String(missed), '0'],
    ['failed calls', String(failed), '0']
  ])
}

/** Calls per second of `call` run by CONCURRENCY workers for a round. */
async function throughput (call: (i: number) => Promise<unknown>): Promise<number> {
  let done = 0
  const end = Date.now() + roundSeconds * 1000
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (Date.now() < end) await call(done++)
  }))
  return done / roundSeconds
}

async function compare (cluster: Cluster, primary: pg.Pool, standby: pg.Pool): Promise<void> {
  const postmaster = await cluster.postmasterPid('primary')
  const withReplica = await appOn(primary, [standby])
  const alone = await appOn(primary, undefined)
  // The same orders in both tables: 100 customers with 20 each.
  for (const { app } of [withReplica, alone]) {
    for (let i = 0; i < 2000; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => app.orders.create(body(`cus_${(i + j) % 100}`))))
  }
  await caughtUp(primary, standby)
  await sleep(300)
  const page = (app: FastifyInstance) => (i: number) => app.orders.list({ limit: 20, filter: { customerId: `cus_${i % 100}` } })
  // Writes in scopes of their own, so the pages that follow need none of them.
  const create = (app: FastifyInstance) => (i: number) => app.orders.create(body(`cus_w${i % 100}`), { scope: { customerId: `cus_w${i % 100}` } })
  // As the routes write: the answer waits for the write's token (its order-consistency header).
  const createWithToken = (app: FastifyInstance) => (i: number) => app.orders.create(body(`cus_w${i % 100}`), { scope: { customerId: `cus_w${i % 100}` }, onConsistency: () => {} })
  const pageRatios: number[] = []
  const writeRatios: number[] = []
  const tokenRatios: number[] = []
  const cpu = { replica: [] as number[], alone: [] as number[] }
  const rates = { replica: [] as number[], alone: [] as number[], writesOn: [] as number[], writesOff: [] as number[], tokensOn: [] as number[] }
  for (let round = 0; round < rounds; round++) {
    const pagesOf = async (app: FastifyInstance, into: number[], rate: number[]) => {
      const before = cpuOf(postmaster)
      const perSecond = await throughput(page(app))
      into.push((cpuOf(postmaster) - before) / (perSecond * roundSeconds) / 1000)
      rate.push(perSecond)
      return perSecond
    }
    // Alternate which goes first, so neither always meets the machine in the same state.
    const [a, b] = round % 2 === 0
      ? [await pagesOf(withReplica.app, cpu.replica, rates.replica), await pagesOf(alone.app, cpu.alone, rates.alone)]
      : [await pagesOf(alone.app, cpu.alone, rates.alone), await pagesOf(withReplica.app, cpu.replica, rates.replica)].reverse() as [number, number]
    pageRatios.push(a / b)
    const [on, off, tokens] = round % 2 === 0
      ? [await throughput(create(withReplica.app)), await throughput(create(alone.app)), await throughput(createWithToken(withReplica.app))]
      : [await throughput(createWithToken(withReplica.app)), await throughput(create(alone.app)), await throughput(create(withReplica.app))].reverse() as [number, number, number]
    rates.writesOn.push(on)
    rates.writesOff.push(off)
    rates.tokensOn.push(tokens)
    writeRatios.push(on / off)
    tokenRatios.push(tokens / off)
  }
  await withReplica.app.close()
  await alone.app.close()
  console.log(`\n${rounds} rounds of ${roundSeconds} s, ${CONCURRENCY} calls at a time through app.orders (median):`)
  printTable(['', 'with the standby', 'primary alone', 'ratio', 'target'], [
    ['pages/s', formatCount(median(rates.replica)), formatCount(median(rates.alone)), median(pageRatios).toFixed(2), '≥ 0.95'],
    ['creates/s', formatCount(median(rates.writesOn)), formatCount(median(rates.writesOff)), median(writeRatios).toFixed(2), '≥ 0.95'],
    ['creates/s answered with their token (as the routes)', formatCount(median(rates.tokensOn)), formatCount(median(rates.writesOff)), median(tokenRatios).toFixed(2), '≥ 0.95'],
    ['primary CPU per page (µs)', median(cpu.replica).toFixed(1), median(cpu.alone).toFixed(1), (median(cpu.replica) / median(cpu.alone)).toFixed(2), 'what a second machine buys']
  ])
}

console.log('Reads from replicas: a PostgreSQL 15 primary and a standby with recovery_min_apply_delay = 500ms, started here')
const cluster = await startCluster('500ms')
try {
  const primary = cluster.pool('primary', 10)
  const standby = cluster.pool('standby', 10)
  await simulate(primary, standby)
  await compare(cluster, primary, standby)
} finally {
  await cluster.stop()
}
