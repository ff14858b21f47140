// `npm run bench`: req/s of the plugin against the same job hand-written on bare Fastify, the cost of
// custom fields on createOrder, then page cost by store size.
import { execFileSync, fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { asMetadata, withCustomFields } from './custom-fields.js'
import { topSelfTime } from './profile.js'
import { formatCount as format, median, printTable } from './report.js'
import { hasPostgresAdapter, type StorageName } from './storages.js'

const USAGE = `Usage: npm run bench -- [options]
  --duration <s>     seconds of load per server and round (default 2)
  --rounds <n>       alternating rounds per route, A B then B A (default 10)
  --warmup <s>       seconds of load per server before the rounds (default 2)
  --connections <n>  concurrent connections (default 10)
  --storage <name>   also load the plugin on pglite or postgres (repeatable; default: pglite when
                     lib/storage/postgres.ts exists, and postgres too when DATABASE_URL is set)
  --memory-only      only the memory storage and the baseline
  --route <name>     only this route: getOrderList or createOrder (repeatable; default both)
  --only <part>      http (req/s), custom-fields (createOrder with custom fields against without,
                     memory storage) or store (page cost and heap per order); default all three
  --quick            1 s rounds, 2 rounds, 1 s warmup, stores of 2k and 20k orders
  --source           load the plugin from lib/ through tsx instead of building dist/ first
  --profile          run both servers under --cpu-prof and print their top self-time frames
                     (profiles/plugin, profiles/baseline)`

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string' },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '10' },
    storage: { type: 'string', multiple: true },
    'memory-only': { type: 'boolean', default: false },
    route: { type: 'string', multiple: true },
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

function defaultStorages (): StorageName[] {
  if (!hasPostgresAdapter()) return []
  return process.env.DATABASE_URL === undefined ? ['pglite'] : ['pglite', 'postgres']
}
const extraStorages = flags['memory-only'] ? [] : (flags.storage as StorageName[] | undefined) ?? defaultStorages()
for (const storage of extraStorages) {
  if (storage !== 'pglite' && storage !== 'postgres') throw new Error(`unknown storage ${storage}; use pglite or postgres`)
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
  return { name, url: `http://127.0.0.1:${message.port}`, child }
}

async function stop (server: Server): Promise<void> {
  const exited = once(server.child, 'exit')
  server.child.disconnect()
  await exited
}

const bodies = {
  getOrderList: JSON.stringify({ limit: 20, filter: { customerId: 'cus_3' } }),
  createOrder: JSON.stringify({
    customerId: 'cus_bench',
    currency: 'EUR',
    items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }, { sku: 'B-2', quantity: 1, unitPrice: 990 }],
    metadata: { channel: 'web', campaign: 'spring' }
  })
}
type Route = keyof typeof bodies

async function post (server: Server, route: Route, body: string): Promise<void> {
  const response = await fetch(`${server.url}/order/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  if (!response.ok) throw new Error(`${server.name} ${route} answered ${response.status}: ${await response.text()}`)
  await response.arrayBuffer()
}

/** 1000 orders over 10 customers, so the filtered page is a full one with a next cursor. */
async function seed (server: Server): Promise<void> {
  for (let batch = 0; batch < 100; batch++) {
    await Promise.all(Array.from({ length: 10 }, (_, customer) => post(server, 'createOrder', JSON.stringify({
      customerId: `cus_${customer}`,
      currency: 'EUR',
      items: [{ sku: `SKU-${batch}`, quantity: 1 + customer, unitPrice: 100 * batch }],
      metadata: { batch: String(batch) }
    }))))
  }
}

/** The server process's user + system CPU time so far, in microseconds. */
async function cpuTime (server: Server): Promise<number> {
  const reply = once(server.child, 'message') as Promise<[{ cpu: NodeJS.CpuUsage }]>
  server.child.send('cpu')
  const [{ cpu }] = await reply
  return cpu.user + cpu.system
}

interface Load {
  /** Requests per second. */
  rate: number
  /** Server CPU microseconds per request. */
  cpu: number
}

async function load (server: Server, route: Route, seconds: number, body = bodies[route]): Promise<Load> {
  const cpuBefore = await cpuTime(server)
  const result = await autocannon({
    url: `${server.url}/order/${route}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    duration: seconds
  })
  if (result.errors > 0 || result.non2xx > 0 || result.timeouts > 0) {
    throw new Error(`${server.name} ${route}: ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts`)
  }
  return { rate: result.requests.average, cpu: (await cpuTime(server) - cpuBefore) / result.requests.total }
}

async function benchHttp (): Promise<void> {
  if (flags.profile) {
    rmSync(profileDir, { recursive: true, force: true })
    mkdirSync(profileDir, { recursive: true })
  }
  const profileArgs = (name: string) => flags.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, name)}`] : []
  const servers = [
    await start('plugin (memory)', 'plugin.ts', { BENCH_STORAGE: 'memory' }, profileArgs('plugin')),
    await start('bare Fastify', 'baseline.ts', {}, profileArgs('baseline'))
  ]
  for (const storage of extraStorages) servers.push(await start(`plugin (${storage})`, 'plugin.ts', { BENCH_STORAGE: storage }))
  const [plugin, baseline, ...databases] = servers as [Server, Server, ...Server[]]
  try {
    for (const server of servers) await seed(server)
    console.log(`HTTP: ${rounds} alternating rounds of ${duration} s per server after a ${warmup} s warmup, ${connections} connections`)
    const rows: string[][] = []
    for (const route of (flags.route ?? Object.keys(bodies)) as Route[]) {
      if (!Object.hasOwn(bodies, route)) throw new Error(`unknown route ${route}; use ${Object.keys(bodies).join(' or ')}`)
      for (const server of [plugin, baseline]) await load(server, route, warmup)
      const loads = new Map<Server, Load[]>(servers.map(server => [server, []]))
      const ratios: number[] = []
      const cpuRatios: number[] = []
      const report = (round: number, measured: Server[], suffix = '') => console.log(`  ${route} round ${round}: ${measured.map(server => {
        const { rate, cpu } = loads.get(server)!.at(-1)!
        return `${server.name} ${format(rate)} req/s (${cpu.toFixed(0)} µs CPU/req)`
      }).join(', ')}${suffix}`)
      for (let round = 1; round <= rounds; round++) {
        // A B, then B A: whatever favours the first (or second) run of a round favours each server equally.
        for (const server of round % 2 === 1 ? [plugin, baseline] : [baseline, plugin]) loads.get(server)!.push(await load(server, route, duration))
        const [a, b] = [loads.get(plugin)!.at(-1)!, loads.get(baseline)!.at(-1)!]
        ratios.push(a.rate / b.rate)
        cpuRatios.push(b.cpu / a.cpu)
        report(round, [plugin, baseline], `; ratio ${(a.rate / b.rate).toFixed(3)}`)
      }
      // The database storages after the ratio rounds, so a database server's background work
      // (checkpoints, autovacuum) never lands in them.
      for (const server of databases) await load(server, route, warmup)
      for (let round = 1; databases.length > 0 && round <= rounds; round++) {
        for (const server of round % 2 === 1 ? databases : [...databases].reverse()) loads.get(server)!.push(await load(server, route, duration))
        report(round, databases)
      }
      const medianOf = (server: Server, field: keyof Load) => median(loads.get(server)!.map(measured => measured[field]))
      rows.push([route, format(medianOf(plugin, 'rate')), format(medianOf(baseline, 'rate')), median(ratios).toFixed(2),
        `${medianOf(plugin, 'cpu').toFixed(0)} / ${medianOf(baseline, 'cpu').toFixed(0)}`, median(cpuRatios).toFixed(2),
        ...databases.map(server => format(medianOf(server, 'rate')))])
    }
    console.log()
    printTable(['route', 'plugin req/s', 'bare Fastify req/s', 'ratio (median)', 'CPU µs/req plugin / bare', 'CPU ratio (bare / plugin)', ...databases.map(server => `${server.name} req/s`)], rows)
  } finally {
    for (const server of servers) await stop(server)
  }
  if (flags.profile) {
    for (const name of ['plugin', 'baseline']) {
      const dir = join(profileDir, name)
      // The tsx loader thread writes a profile of its own; the server's main thread has the largest.
      const file = readdirSync(dir).sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0]!
      console.log(`\nTop self-time frames of the ${name} server (${join(dir, file)}):`)
      printTable(['self %', 'function', 'where'], topSelfTime(join(dir, file), 25))
    }
  }
}

/**
 * createOrder on memory storage with the custom fields of bench/custom-fields.ts (ten on the order,
 * two on each item) against the same plugin and body without them, in alternating rounds. A third
 * server, without custom fields, takes a body padded with metadata to the same length: the share of
 * the difference that comes from the bytes themselves (parsing, storing, serializing more).
 */
async function benchCustomFields (): Promise<void> {
  const withFields = withCustomFields(bodies.createOrder)
  const runs = [
    { server: await start('without', 'plugin.ts', { BENCH_STORAGE: 'memory' }), body: bodies.createOrder },
    { server: await start('with custom fields', 'plugin.ts', { BENCH_STORAGE: 'memory', BENCH_CUSTOM_FIELDS: '1' }), body: withFields },
    { server: await start('same bytes as metadata', 'plugin.ts', { BENCH_STORAGE: 'memory' }), body: asMetadata(bodies.createOrder, withFields.length) }
  ]
  const [plain, custom, padded] = runs as [typeof runs[0], typeof runs[0], typeof runs[0]]
  try {
    console.log(`Custom fields: createOrder with 10 order and 2 item custom fields (${custom.body.length} bytes) against none (${plain.body.length} bytes), ${rounds} alternating rounds of ${duration} s after a ${warmup} s warmup`)
    for (const { server, body } of runs) await load(server, 'createOrder', warmup, body)
    const loads = new Map(runs.map(run => [run, [] as Load[]]))
    const ratios = { custom: [] as number[], padded: [] as number[] }
    for (let round = 1; round <= rounds; round++) {
      for (const run of round % 2 === 1 ? runs : [...runs].reverse()) loads.get(run)!.push(await load(run.server, 'createOrder', duration, run.body))
      const [a, b, c] = [plain, custom, padded].map(run => loads.get(run)!.at(-1)!) as [Load, Load, Load]
      ratios.custom.push(b.rate / a.rate)
      ratios.padded.push(c.rate / a.rate)
      console.log(`  round ${round}: ${runs.map(run => `${run.server.name} ${format(loads.get(run)!.at(-1)!.rate)} req/s`).join(', ')}; ratio ${(b.rate / a.rate).toFixed(3)}`)
    }
    const medianOf = (run: typeof plain, field: keyof Load) => median(loads.get(run)!.map(measured => measured[field]))
    console.log()
    printTable(['route', 'without req/s', 'with custom fields req/s', 'ratio (median)', 'same bytes as metadata: ratio (median)', 'CPU µs/req without / with / same bytes'], [[
      'createOrder', format(medianOf(plain, 'rate')), format(medianOf(custom, 'rate')), median(ratios.custom).toFixed(2), median(ratios.padded).toFixed(2),
      [plain, custom, padded].map(run => medianOf(run, 'cpu').toFixed(0)).join(' / ')
    ]])
  } finally {
    for (const { server } of runs) await stop(server)
  }
}

async function benchStore (): Promise<void> {
  const child = fork(join(benchDir, 'store-size.ts'), quick ? ['--quick'] : [], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    env: process.env,
    stdio: 'inherit'
  })
  const [code] = await once(child, 'exit')
  if (code !== 0) throw new Error(`store-size.ts exited with ${code}`)
}

if (flags.only === undefined || flags.only === 'http') await benchHttp()
if (flags.only === undefined || flags.only === 'custom-fields') {
  if (flags.only === undefined) console.log()
  await benchCustomFields()
}
if (flags.only === undefined || flags.only === 'store') {
  if (flags.only === undefined) console.log()
  await benchStore()
}
