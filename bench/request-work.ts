// The plugin's own work per request, in process: CPU time per call of the order rules' create and
// list on the memory storage (what the routes run between Fastify's validation and its serializer)
// against the same job written by hand (bench/servers/baseline-orders.ts). The calls of each take
// turns in short batches, so other work on a shared machine slows each alike; with --against <dir>,
// the rules of another build (a copy of dist/ made before a change) take their turns as well.
import { parseArgs } from 'node:util'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { libraryDir } from './storages.js'
import { printTable } from './report.js'
import { baselineOrders } from './servers/baseline-orders.js'

const { values: flags } = parseArgs({ options: { against: { type: 'string' }, rounds: { type: 'string' }, quick: { type: 'boolean', default: false } } })
const rounds = Number(flags.rounds ?? (flags.quick ? 50 : 300))
const BATCH = 500

interface Job {
  create: (body: any) => unknown
  list: (body: any) => unknown
}

/** The rules of the build in `dir` over a memory storage, wired as the plugin wires them at register. */
async function rulesOf (dir: URL): Promise<Job> {
  const load = (path: string) => import(new URL(path, dir).href)
  const [{ checkOptions }, { buildOrderSchemas }, { createOrderService }, { loadTelemetry }] = await Promise.all(
    ['options.js', 'http/schemas.js', 'service.js', 'telemetry/telemetry.js'].map(load))
  const log = { error () {}, warn () {}, info () {}, debug () {}, child: () => log }
  const config = checkOptions({})
  const schemas = buildOrderSchemas({ statuses: config.workflow.statuses, maxItems: config.maxItems, maxPageSize: config.maxPageSize })
  const { rules } = createOrderService({ ...config, schemas, log, telemetry: await loadTelemetry() })
  return { create: body => rules.create(body), list: body => rules.list(body) }
}

const orders = baselineOrders()
const jobs: Record<string, Job> = { plugin: await rulesOf(libraryDir), 'by hand': { create: body => orders.create(body), list: body => orders.page(body) } }
if (flags.against !== undefined) jobs[`plugin (${flags.against})`] = await rulesOf(pathToFileURL(`${resolve(flags.against)}/`))

// The bodies of the HTTP benchmark, parsed for each call as a request's is; each job first holds 2,000 orders of 10 customers.
const bodies = {
  create: JSON.stringify({ customerId: 'cus_bench', currency: 'EUR', items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }, { sku: 'B-2', quantity: 1, unitPrice: 990 }], metadata: { channel: 'web', campaign: 'spring' } }),
  list: JSON.stringify({ limit: 20, filter: { customerId: 'cus_3' } })
}
for (const job of Object.values(jobs)) {
  for (let i = 0; i < 2000; i++) await job.create({ customerId: `cus_${i % 10}`, currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unitPrice: 100 }] })
}
const cpu = new Map<string, number>()
for (let round = 0; round < rounds; round++) {
  for (const [name, job] of Object.entries(jobs)) {
    for (const call of ['create', 'list'] as const) {
      const start = process.cpuUsage()
      for (let i = 0; i < BATCH; i++) await job[call](JSON.parse(bodies[call]))
      const { user, system } = process.cpuUsage(start)
      cpu.set(`${call} ${name}`, (cpu.get(`${call} ${name}`) ?? 0) + user + system)
    }
  }
}
console.log(`The work per request in process: ${rounds} rounds of ${BATCH} calls of each, taking turns (CPU µs per call, JSON.parse of the body included)`)
printTable(['call', ...Object.keys(jobs)], (['create', 'list'] as const).map(call =>
  [call, ...Object.keys(jobs).map(name => (cpu.get(`${call} ${name}`)! / (rounds * BATCH)).toFixed(2))]))
