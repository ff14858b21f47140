// The price of telemetry: nanoseconds per telemetry call, and req/s of the three routes without
// @opentelemetry/api, with it and no SDK, with an SDK whose exporters drop everything, and with that
// SDK in use while the plugin reports nothing (the SDK's own price, apart from the plugin's).
// Run by bench/run.ts (`npm run bench -- --only telemetry`).
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { formatCount, median, printTable } from './report.js'
import type { TelemetryMode } from './servers/telemetry-mode.js'
import type { StorageName } from './storages.js'
import { cpuTimeOf } from './servers/serve.js'

// Memory storage, then each database storage named by --storage (bench/run.ts passes its own).
const { values: flags } = parseArgs({ options: { quick: { type: 'boolean', default: false }, storage: { type: 'string', multiple: true, default: [] } } })
const storages: StorageName[] = ['memory', ...flags.storage as StorageName[]]
const [duration, rounds, warmup, connections] = flags.quick ? [1, 2, 1, 10] : [2, 10, 2, 10]
const benchDir = import.meta.dirname
const modes: TelemetryMode[] = ['none', 'api', 'sdk', 'sdk-silent']
const label: Record<TelemetryMode, string> = {
  none: 'no @opentelemetry/api',
  api: 'API, no SDK',
  sdk: 'SDK, exporters that drop',
  'sdk-silent': 'SDK in use, plugin not reporting'
}

function child (file: string, mode: TelemetryMode, args: string[] = [], storage: StorageName = 'memory'): ChildProcess {
  return fork(join(benchDir, file), args, {
    execArgv: ['--import', 'tsx'],
    // Each server in tables of its own on a database server.
    env: { ...process.env, BENCH_TELEMETRY: mode, BENCH_STORAGE: storage, BENCH_TABLE: `fastify_order_bench_${mode.replace('-', '_')}` },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
}

async function calls (): Promise<void> {
  const byMode = new Map<TelemetryMode, Record<string, number>>()
  for (const mode of ['none', 'api', 'sdk'] as const) {
    const measuring = child('telemetry-calls.ts', mode, flags.quick ? ['--quick'] : [])
    const [{ results }] = await once(measuring, 'message') as [{ results: Record<string, number> }]
    await once(measuring, 'exit')
    byMode.set(mode, results)
  }
  console.log('Telemetry calls: nanoseconds per call over the same work without it (best of three passes)')
  printTable(['call', ...(['none', 'api', 'sdk'] as const).map(mode => label[mode])],
    Object.keys(byMode.get('none')!).map(call => [call, ...[...byMode.values()].map(results => Math.max(0, results[call]!).toFixed(0))]))
}

interface Server {
  mode: TelemetryMode
  url: string
  process: ChildProcess
  /** The orders updateOrderStatus moves, and how many moves were sent: each order goes pending → paid → pending ... */
  ids: string[]
  moves: number
}

async function start (mode: TelemetryMode, storage: StorageName): Promise<Server> {
  const serving = child('servers/telemetry.ts', mode, [], storage)
  const [{ port }] = await once(serving, 'message') as [{ port: number }]
  return { mode, url: `http://127.0.0.1:${port}`, process: serving, ids: [], moves: 0 }
}

// Moves before creates: each create adds an order and an event the servers keep, and the heap they
// make slows what follows.
const bodies = {
  getOrderList: () => JSON.stringify({ limit: 20, filter: { customerId: 'cus_3' } }),
  // Each order is moved once every ids.length requests: no two moves of one order meet.
  updateOrderStatus: (server: Server) => {
    const move = server.moves++
    const id = server.ids[move % server.ids.length]
    return JSON.stringify({ id, status: Math.floor(move / server.ids.length) % 2 === 0 ? 'paid' : 'pending' })
  },
  createOrder: () => JSON.stringify({
    customerId: 'cus_bench',
    currency: 'EUR',
    items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }, { sku: 'B-2', quantity: 1, unitPrice: 990 }],
    metadata: { channel: 'web', campaign: 'spring' }
  })
}
type Route = keyof typeof bodies

/**
 * 10,000 orders over 10 customers: a full filtered page, and the orders updateOrderStatus moves. Each
 * move adds to an order's status history, whose length its cost follows: spread over that many orders,
 * a run adds a few dozen entries to each at most, the same for every server.
 */
async function seed (server: Server): Promise<void> {
  for (let batch = 0; batch < 1000; batch++) {
    server.ids.push(...await Promise.all(Array.from({ length: 10 }, async (_, customer) => {
      const response = await fetch(`${server.url}/order/createOrder`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customerId: `cus_${customer}`, currency: 'EUR', items: [{ sku: `SKU-${batch}`, quantity: 1, unitPrice: 100 }] })
      })
      return ((await response.json()) as { id: string }).id
    })))
  }
}

async function load (server: Server, route: Route, seconds: number): Promise<{ rate: number, cpu: number }> {
  const before = await cpuTimeOf(server.process)
  const result = await autocannon({
    url: `${server.url}/order/${route}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    requests: [{ setupRequest: request => ({ ...request, body: bodies[route](server) }) }],
    connections,
    duration: seconds
  })
  if (result.errors > 0 || result.non2xx > 0 || result.timeouts > 0) {
    throw new Error(`${label[server.mode]} ${route}: ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts`)
  }
  return { rate: result.requests.average, cpu: (await cpuTimeOf(server.process) - before) / result.requests.total }
}

async function http (storage: StorageName): Promise<void> {
  const servers: Server[] = []
  try {
    for (const mode of modes) servers.push(await start(mode, storage))
    for (const server of servers) await seed(server)
    const server = (mode: TelemetryMode) => servers.find(candidate => candidate.mode === mode)!
    // The price of the API without an SDK, and of an SDK, against no API at all; and the plugin's own
    // share of the latter, against the same SDK in use while the plugin reports nothing.
    type Pair = readonly [TelemetryMode, TelemetryMode]
    const pairs: Pair[] = [['api', 'none'], ['sdk', 'none'], ['sdk', 'sdk-silent']]
    const pairName = ([a, b]: Pair) => `${label[a]} / ${label[b]}`
    console.log(`\nRoutes on ${storage} storage: ${rounds} alternating rounds of ${duration} s per server after a ${warmup} s warmup, ${connections} connections`)
    const rows: string[][] = []
    for (const route of Object.keys(bodies) as Route[]) {
      for (const each of servers) await load(each, route, warmup)
      const loads = new Map(servers.map(each => [each, [] as Array<{ rate: number, cpu: number }>]))
      const ratios = new Map(pairs.map(pair => [pair, [] as number[]]))
      for (let round = 1; round <= rounds; round++) {
        for (const each of round % 2 === 1 ? servers : [...servers].reverse()) loads.get(each)!.push(await load(each, route, duration))
        const rate = (mode: TelemetryMode) => loads.get(server(mode))!.at(-1)!.rate
        for (const pair of pairs) ratios.get(pair)!.push(rate(pair[0]) / rate(pair[1]))
        console.log(`  ${route} round ${round}: ${servers.map(each => `${label[each.mode]} ${formatCount(rate(each.mode))} req/s`).join(', ')}`)
      }
      const medianOf = (each: Server, field: 'rate' | 'cpu') => median(loads.get(each)!.map(measured => measured[field]))
      rows.push([route, ...servers.map(each => formatCount(medianOf(each, 'rate'))), ...pairs.map(pair => median(ratios.get(pair)!).toFixed(3)),
        servers.map(each => medianOf(each, 'cpu').toFixed(0)).join(' / ')])
    }
    console.log()
    printTable(['route', ...servers.map(each => `${label[each.mode]} req/s`), ...pairs.map(pair => `${pairName(pair)} (median)`),
      `CPU µs/req ${servers.map(each => label[each.mode]).join(' / ')}`], rows)
  } finally {
    for (const server of servers) {
      const exited = once(server.process, 'exit')
      server.process.disconnect()
      await exited
    }
  }
}

await calls()
for (const storage of storages) await http(storage)
