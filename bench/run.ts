// `npm run bench`: req/s of the plugin against the same job hand-written on bare Fastify, the cost of
// custom fields on createOrder, of guards and of changes after placement, page cost by store size, the event feed.
import { execFileSync, fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { createBody, pageBody } from './bodies.js'
import { withCustomFields } from './custom-fields.js'
import { openBackendCpu, type BackendCpu } from './backend-cpu.js'
import { topSelfTime } from './profile.js'
import { formatCount as format, median, printTable } from './report.js'
import { hasMysqlAdapter } from './mysql.js'
import { hasPostgresAdapter, type StorageName } from './storages.js'
import { USAGE } from './usage.js'
import { cpuTimeOf } from './servers/serve.js'

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string' },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '10' },
    storage: { type: 'string', multiple: true },
    'memory-only': { type: 'boolean', default: false },
    route: { type: 'string', multiple: true },
    reference: { type: 'boolean', default: false },
    store: { type: 'string' },
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    source: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false }
  }
})
if (flags.help) {
  console.log(USAGE)
  process.exit(0)
}
const quick = flags.quick
// Many short rounds rather than a few long ones: the median of the ratios then shrugs off a noisy round.
const duration = Number(flags.duration ?? (quick ? 1 : 2))
const rounds = Number(flags.rounds ?? (quick ? 2 : 10))
const warmup = Number(flags.warmup ?? (quick ? 1 : 2))
const connections = Number(flags.connections)
if (flags.store !== undefined && flags.store !== 'scope' && flags.store !== 'body') throw new Error(`unknown --store ${flags.store}; use scope or body`)

function defaultStorages (): StorageName[] {
  const postgres: StorageName[] = !hasPostgresAdapter() ? [] : process.env.DATABASE_URL === undefined ? ['pglite'] : ['pglite', 'postgres']
  return process.env.MYSQL_URL !== undefined && hasMysqlAdapter() ? [...postgres, 'mysql'] : postgres
}
const extraStorages = flags['memory-only'] ? [] : (flags.storage as StorageName[] | undefined) ?? defaultStorages()
for (const storage of extraStorages) {
  if (storage !== 'pglite' && storage !== 'postgres' && storage !== 'mysql') throw new Error(`unknown storage ${storage}; use pglite, postgres or mysql`)
}

const benchDir = import.meta.dirname

// Users run the compiled package, not the sources through tsx (whose keepNames wraps every closure).
if (flags.source) {
  process.env.BENCH_LIB = '../lib/'
} else {
  console.log('Building dist/ (npm run build) so the plugin runs as published...')
  execFileSync(process.execPath, [join(benchDir, '..', 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(benchDir, '..', 'tsconfig.build.json')], { stdio: 'inherit' })
}
const profileDir = join(benchDir, '..', 'profiles')

interface Server {
  name: string
  url: string
  child: ChildProcess
  /** The application_name of its PostgreSQL connections, if it has any. */
  applicationName?: string
  /** Its orders are in a store, named in the bodies it gets (--store body). */
  storeInBody?: boolean
}

async function start (name: string, file: string, env: Record<string, string> = {}, execArgv: string[] = []): Promise<Server> {
  const child = fork(join(benchDir, 'servers', file), [], {
    execArgv: ['--import', 'tsx', ...execArgv],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const [message] = await Promise.race([
    once(child, 'message') as Promise<[{ port: number }]>,
    once(child, 'exit').then(([code]) => { throw new Error(`${name} server exited with ${code} before listening`) })
  ])
  return { name, url: `http://127.0.0.1:${message.port}`, child, applicationName: env.BENCH_APPLICATION_NAME }
}

async function stop (server: Server): Promise<void> {
  const exited = once(server.child, 'exit')
  server.child.disconnect()
  await exited
}

const bodies = { getOrderList: JSON.stringify(pageBody), createOrder: JSON.stringify(createBody) }
type Route = keyof typeof bodies

/** The body of `route` for `server`: with --store body, in (or filtered by) the store "eu". */
function bodyOf (server: Server, route: Route, body = bodies[route]): string {
  if (server.storeInBody !== true) return body
  const parsed = JSON.parse(body)
  if (route === 'createOrder') parsed.store = 'eu'
  else parsed.filter = { ...parsed.filter, store: 'eu' }
  return JSON.stringify(parsed)
}

async function post (server: Server, route: Route, body: string): Promise<void> {
  const response = await fetch(`${server.url}/order/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  if (!response.ok) throw new Error(`${server.name} ${route} answered ${response.status}: ${await response.text()}`)
  await response.arrayBuffer()
}

/** 1000 orders over 10 customers, so the filtered page is a full one with a next cursor. */
async function seed (server: Server): Promise<void> {
  for (let batch = 0; batch < 100; batch++) {
    await Promise.all(Array.from({ length: 10 }, (_, customer) => post(server, 'createOrder', bodyOf(server, 'createOrder', JSON.stringify({
      customerId: `cus_${customer}`,
      currency: 'EUR',
      items: [{ sku: `SKU-${batch}`, quantity: 1 + customer, unitPrice: 100 * batch }],
      metadata: { batch: String(batch) }
    })))))
  }
}

interface Load {
  /** Requests per second. */
  rate: number
  /** Server CPU microseconds per request. */
  cpu: number
  /** CPU microseconds per request of the server's PostgreSQL connections, when the database runs on this machine. */
  database: number | undefined
}

// Set while database servers run, when a PostgreSQL server is at DATABASE_URL.
let backends: BackendCpu | undefined

let references = 0

async function load (server: Server, route: Route, seconds: number, body = bodyOf(server, route)): Promise<Load> {
  const databaseCpu = async () => server.applicationName === undefined ? undefined : await backends?.cpu(server.applicationName)
  const databaseBefore = await databaseCpu()
  const cpuBefore = await cpuTimeOf(server.child)
  // With --reference, each create sends the body with a reference no create used before.
  const withReference = flags.reference && route === 'createOrder'
  const result = await autocannon({
    url: `${server.url}/order/${route}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    ...withReference && { requests: [{ setupRequest: request => ({ ...request, body: `${body.slice(0, -1)},"reference":"ref_${++references}"}` }) }] },
    connections,
    duration: seconds
  })
  if (result.errors > 0 || result.non2xx > 0 || result.timeouts > 0) {
    throw new Error(`${server.name} ${route}: ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts`)
  }
  const cpu = (await cpuTimeOf(server.child) - cpuBefore) / result.requests.total
  const databaseAfter = await databaseCpu()
  const database = databaseBefore === undefined || databaseAfter === undefined ? undefined : (databaseAfter - databaseBefore) / result.requests.total
  return { rate: result.requests.average, cpu, database }
}

/** One storage's servers: the plugin, and the same job hand-written with and without an outbox; with --store, the plugin with a store. */
interface DatabaseServers {
  storage: StorageName
  plugin: Server
  outbox: Server
  plain: Server
  stored?: Server
}

async function benchHttp (): Promise<void> {
  if (flags.profile) {
    rmSync(profileDir, { recursive: true, force: true })
    mkdirSync(profileDir, { recursive: true })
  }
  const profiled: string[] = []
  const launch = (name: string, file: string, env: Record<string, string>, profileName: string) => {
    if (flags.profile) profiled.push(profileName)
    // Named on PostgreSQL, so the CPU time of each server's connections can be told apart.
    if (env.BENCH_STORAGE === 'postgres') env = { ...env, BENCH_APPLICATION_NAME: `fastify-order-bench-${profileName}` }
    return start(name, file, env, flags.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, profileName)}`] : [])
  }
  const plugin = await launch('plugin (memory)', 'plugin.ts', { BENCH_STORAGE: 'memory' }, 'plugin')
  const baseline = await launch('bare Fastify', 'baseline.ts', {}, 'baseline')
  const servers = [plugin, baseline]
  const databases: DatabaseServers[] = []
  if (extraStorages.includes('postgres')) backends = await openBackendCpu()
  try {
    for (const storage of extraStorages) {
      // The hand-written job: with pg on PostgreSQL and PGlite, with mysql2 on MySQL.
      const handWritten = storage === 'mysql' ? 'baseline-mysql.ts' : 'baseline-sql.ts'
      const group: DatabaseServers = {
        storage,
        plugin: await launch(`plugin (${storage})`, 'plugin.ts', { BENCH_STORAGE: storage }, `plugin-${storage}`),
        outbox: await launch(`${storage} + outbox`, handWritten, { BENCH_STORAGE: storage, BENCH_OUTBOX: '1' }, `sql-${storage}`),
        plain: await launch(`${storage}, no outbox`, handWritten, { BENCH_STORAGE: storage, BENCH_OUTBOX: '0' }, `sql-plain-${storage}`)
      }
      if (flags.store !== undefined) {
        const where: Record<string, string> = flags.store === 'scope' ? { BENCH_SCOPE: JSON.stringify({ store: 'eu' }) } : {}
        group.stored = await launch(`plugin (${storage}, store in the ${flags.store})`, 'plugin.ts', { BENCH_STORAGE: storage, BENCH_TABLE: 'fastify_order_bench_in_store', ...where }, `plugin-store-${storage}`)
        group.stored.storeInBody = flags.store === 'body'
      }
      databases.push(group)
      servers.push(group.plugin, group.outbox, group.plain, ...group.stored === undefined ? [] : [group.stored])
    }
    for (const server of servers) await seed(server)
    console.log(`HTTP: ${rounds} alternating rounds of ${duration} s per server after a ${warmup} s warmup, ${connections} connections`)
    const rows: string[][] = []
    const databaseRows: string[][] = []
    const storeRows: string[][] = []
    for (const route of (flags.route ?? Object.keys(bodies)) as Route[]) {
      if (!Object.hasOwn(bodies, route)) throw new Error(`unknown route ${route}; use ${Object.keys(bodies).join(' or ')}`)
      for (const server of [plugin, baseline]) await load(server, route, warmup)
      const loads = new Map<Server, Load[]>(servers.map(server => [server, []]))
      const ratios = new Map<string, number[]>()
      const ratio = (name: string, a: Server, b: Server) => {
        const value = loads.get(a)!.at(-1)!.rate / loads.get(b)!.at(-1)!.rate
        ratios.set(name, [...ratios.get(name) ?? [], value])
        return value
      }
      const report = (round: number, measured: Server[], suffix = '') => console.log(`  ${route} round ${round}: ${measured.map(server => {
        const { rate, cpu, database } = loads.get(server)!.at(-1)!
        return `${server.name} ${format(rate)} req/s (${cpu.toFixed(0)}${database === undefined ? '' : ` + ${database.toFixed(0)} PostgreSQL`} µs CPU/req)`
      }).join(', ')}${suffix}`)
      for (let round = 1; round <= rounds; round++) {
        // A B, then B A: whatever favours the first (or second) run of a round favours each server equally.
        for (const server of round % 2 === 1 ? [plugin, baseline] : [baseline, plugin]) loads.get(server)!.push(await load(server, route, duration))
        const [a, b] = [loads.get(plugin)!.at(-1)!, loads.get(baseline)!.at(-1)!]
        ratio('memory', plugin, baseline)
        ratios.set('memory cpu', [...ratios.get('memory cpu') ?? [], b.cpu / a.cpu])
        report(round, [plugin, baseline], `; ratio ${(a.rate / b.rate).toFixed(3)}`)
      }
      // The database storages after the ratio rounds, so a database server's background work
      // (checkpoints, autovacuum) never lands in them. A page is read by the same SQL with or without
      // an outbox, so the hand-written server without one is loaded for createOrder only.
      const measuredOf = (group: DatabaseServers) => [
        ...route === 'createOrder' ? [group.plugin, group.outbox, group.plain] : [group.plugin, group.outbox],
        ...group.stored === undefined ? [] : [group.stored]
      ]
      const measured = databases.flatMap(measuredOf)
      for (const server of measured) await load(server, route, warmup)
      for (let round = 1; measured.length > 0 && round <= rounds; round++) {
        for (const server of round % 2 === 1 ? measured : [...measured].reverse()) loads.get(server)!.push(await load(server, route, duration))
        for (const group of databases) {
          const suffix = [`plugin / outbox ${ratio(`${group.storage} outbox`, group.plugin, group.outbox).toFixed(3)}`]
          if (route === 'createOrder') {
            suffix.push(`plugin / no outbox ${ratio(`${group.storage} plain`, group.plugin, group.plain).toFixed(3)}`)
            suffix.push(`outbox / no outbox ${ratio(`${group.storage} outbox price`, group.outbox, group.plain).toFixed(3)}`)
          }
          if (group.stored !== undefined) suffix.push(`with a store / without ${ratio(`${group.storage} store`, group.stored, group.plugin).toFixed(3)}`)
          report(round, measuredOf(group), `; ${suffix.join(', ')}`)
        }
      }
      const medianOf = (server: Server, field: 'rate' | 'cpu') => median(loads.get(server)!.map(measured => measured[field]))
      const medianRatio = (name: string) => median(ratios.get(name)!).toFixed(2)
      const cpuOf = (a: Server, b: Server) => `${medianOf(a, 'cpu').toFixed(0)} / ${medianOf(b, 'cpu').toFixed(0)}`
      const databaseCpuOf = (a: Server, b: Server) => {
        const [of, ob] = [a, b].map(server => loads.get(server)!.map(measured => measured.database))
        if ([...of!, ...ob!].includes(undefined)) return '–'
        return `${median(of as number[]).toFixed(0)} / ${median(ob as number[]).toFixed(0)}`
      }
      rows.push([route, format(medianOf(plugin, 'rate')), format(medianOf(baseline, 'rate')), medianRatio('memory'),
        cpuOf(plugin, baseline), medianRatio('memory cpu')])
      for (const group of databases) {
        const create = route === 'createOrder'
        databaseRows.push([route, group.storage, format(medianOf(group.plugin, 'rate')), format(medianOf(group.outbox, 'rate')),
          medianRatio(`${group.storage} outbox`), cpuOf(group.plugin, group.outbox), databaseCpuOf(group.plugin, group.outbox),
          create ? format(medianOf(group.plain, 'rate')) : '–', create ? medianRatio(`${group.storage} plain`) : '–',
          create ? medianRatio(`${group.storage} outbox price`) : '–'])
        if (group.stored !== undefined) {
          storeRows.push([route, group.storage, format(medianOf(group.plugin, 'rate')), format(medianOf(group.stored, 'rate')),
            medianRatio(`${group.storage} store`), cpuOf(group.stored, group.plugin), databaseCpuOf(group.stored, group.plugin)])
        }
      }
    }
    console.log()
    printTable(['route', 'plugin req/s', 'bare Fastify req/s', 'ratio (median)', 'CPU µs/req plugin / bare', 'CPU ratio (bare / plugin)'], rows)
    if (databaseRows.length > 0) {
      console.log('\nOn a database, against the same job hand-written on bare Fastify with SQL (a document table; createOrder')
      console.log('inserts the order and a Debezium-style outbox row, in one statement with pg, in one transaction with mysql2, or the order alone):')
      printTable(['route', 'storage', 'plugin req/s', 'hand-written + outbox req/s', 'ratio (median)', 'Node CPU µs/req plugin / hand-written',
        'PostgreSQL CPU µs/req plugin / hand-written', 'hand-written, no outbox req/s', 'plugin / no outbox (median)', 'outbox / no outbox (median)'], databaseRows)
    }
    if (storeRows.length > 0) {
      console.log(`\nThe plugin with its orders in a store (${flags.store === 'scope' ? 'the store from the scope authorize gives' : 'the store named in each body'}), against the plugin without:`)
      printTable(['route', 'storage', 'without a store req/s', 'with a store req/s', 'with / without (median)', 'Node CPU µs/req with / without',
        'PostgreSQL CPU µs/req with / without'], storeRows)
    }
  } finally {
    for (const server of servers) await stop(server)
    await backends?.close()
  }
  for (const name of profiled) {
    const dir = join(profileDir, name)
    // The tsx loader thread writes a profile of its own; the server's main thread has the largest.
    const file = readdirSync(dir).sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0]!
    console.log(`\nTop self-time frames of the ${name} server (${join(dir, file)}):`)
    printTable(['self %', 'function', 'where'], topSelfTime(join(dir, file), 25))
  }
}

/**
 * createOrder on memory storage with the custom fields of bench/custom-fields.ts (ten on the order,
 * two on each item) against the same plugin and body without them, in alternating rounds. The same
 * pair hand-written on bare Fastify, with the same schemas, is the control: the share of the
 * difference that any Fastify route pays for the larger body (parsing, validating, serializing it).
 */
async function benchCustomFields (): Promise<void> {
  const withFields = withCustomFields(bodies.createOrder)
  const on = { BENCH_CUSTOM_FIELDS: '1' }
  const runs = [
    { server: await start('plugin without', 'plugin.ts', { BENCH_STORAGE: 'memory' }), body: bodies.createOrder },
    { server: await start('plugin with custom fields', 'plugin.ts', { BENCH_STORAGE: 'memory', ...on }), body: withFields },
    { server: await start('bare Fastify without', 'baseline.ts'), body: bodies.createOrder },
    { server: await start('bare Fastify with custom fields', 'baseline.ts', on), body: withFields }
  ]
  const [plugin, pluginWith, bare, bareWith] = runs as [typeof runs[0], typeof runs[0], typeof runs[0], typeof runs[0]]
  try {
    console.log(`Custom fields: createOrder with 10 order and 2 item custom fields (${withFields.length} bytes) against none (${bodies.createOrder.length} bytes), ${rounds} alternating rounds of ${duration} s after a ${warmup} s warmup`)
    for (const { server, body } of runs) await load(server, 'createOrder', warmup, body)
    const loads = new Map(runs.map(run => [run, [] as Load[]]))
    const last = (run: typeof plugin) => loads.get(run)!.at(-1)!.rate
    const ratios = { plugin: [] as number[], bare: [] as number[], pluginToBare: [] as number[], pluginToBareWith: [] as number[] }
    for (let round = 1; round <= rounds; round++) {
      for (const run of round % 2 === 1 ? runs : [...runs].reverse()) loads.get(run)!.push(await load(run.server, 'createOrder', duration, run.body))
      ratios.plugin.push(last(pluginWith) / last(plugin))
      ratios.bare.push(last(bareWith) / last(bare))
      ratios.pluginToBare.push(last(plugin) / last(bare))
      ratios.pluginToBareWith.push(last(pluginWith) / last(bareWith))
      console.log(`  round ${round}: ${runs.map(run => `${run.server.name} ${format(last(run))} req/s`).join(', ')}; ratio ${(last(pluginWith) / last(plugin)).toFixed(3)}`)
    }
    const medianOf = (run: typeof plugin, field: 'rate' | 'cpu') => median(loads.get(run)!.map(measured => measured[field]))
    console.log()
    printTable(['route', 'plugin without req/s', 'plugin with req/s', 'plugin: with / without (median)', 'bare Fastify: with / without (median)',
      'plugin / bare Fastify, without / with (median)', 'CPU µs/req plugin without / with, bare without / with'], [[
      'createOrder', format(medianOf(plugin, 'rate')), format(medianOf(pluginWith, 'rate')), median(ratios.plugin).toFixed(2),
      median(ratios.bare).toFixed(2), `${median(ratios.pluginToBare).toFixed(2)} / ${median(ratios.pluginToBareWith).toFixed(2)}`,
      `${[plugin, pluginWith].map(run => medianOf(run, 'cpu').toFixed(0)).join(' / ')}, ${[bare, bareWith].map(run => medianOf(run, 'cpu').toFixed(0)).join(' / ')}`
    ]])
  } finally {
    for (const { server } of runs) await stop(server)
  }
}

/** Runs one of the benchmark's scripts in a process of its own, with the storages chosen here. */
async function runScript (file: string, { storages = false, execArgv = [] as string[] } = {}): Promise<void> {
  const args = [...quick ? ['--quick'] : [], ...storages ? extraStorages.flatMap(storage => ['--storage', storage]) : []]
  const child = fork(join(benchDir, file), args, {
    execArgv: ['--import', 'tsx', ...execArgv],
    env: process.env,
    stdio: 'inherit'
  })
  const [code] = await once(child, 'exit')
  if (code !== 0) throw new Error(`${file} exited with ${code}`)
}

const parts = {
  http: benchHttp,
  'custom-fields': benchCustomFields,
  'request-work': () => runScript('request-work.ts'),
  instructions: () => runScript('instructions.ts'),
  store: () => runScript('store-size.ts', { execArgv: ['--expose-gc'] }),
  feed: () => runScript('feed.ts', { storages: true }),
  soak: () => runScript('soak-events.ts'),
  'scale-pg': () => runScript('scale-pg.ts'),
  desk: () => runScript('desk.ts'),
  'scale-mysql': () => runScript('scale-mysql.ts'),
  webhooks: () => runScript('webhooks.ts', { storages: true }),
  'upgrade-steps': () => runScript('upgrade-steps.ts'),
  guards: () => runScript('guards.ts', { storages: true }),
  'change-storage': () => runScript('change-storage.ts', { storages: true }),
  changes: () => runScript('changes.ts', { storages: true }),
  telemetry: () => runScript('telemetry.ts', { storages: true }),
  stream: () => runScript('stream.ts')
}
// The soak is a check, not a figure, and kills connections on the server, scale-pg and scale-mysql
// fill a million orders (desk too, and drives Chromium), and instructions runs every server under valgrind: they run only when asked for.
const chosen = flags.only === undefined ? ['http', 'request-work', 'custom-fields', 'guards', 'changes', 'store', 'feed', 'webhooks', 'telemetry'] : [flags.only]
for (const [index, part] of chosen.entries()) {
  if (!Object.hasOwn(parts, part)) throw new Error(`unknown part ${part}; use ${Object.keys(parts).join(', ')}`)
  if (index > 0) console.log()
  await parts[part as keyof typeof parts]()
}
