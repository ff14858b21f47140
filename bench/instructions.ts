// Instructions per request, counted by valgrind's callgrind: the plugin on memory against the same routes
// on bare Fastify, and with changes on against off. A count does not move with whatever else runs on the
// machine (the same build and load give the same figure to within a fraction of a percent), where req/s
// and CPU time on a shared two-core host move by 10% from one run to the next. It leaves out two things:
// the kernel's work (the sockets, the same for both servers of a pair, so the full ratio is nearer 1 than
// the count's), and time lost waiting on memory (a count is not a time). Run by bench/run.ts as
// `node --import tsx bench/instructions.ts [--quick]`; needs valgrind on the PATH (Linux).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { changeActions, createBody, pageBody } from './bodies.js'
import { formatCount, printTable } from './report.js'
import { loadRequests, startSeeded, stopSeeded, type SeededServer } from './seeded-servers.js'

const { values: flags } = parseArgs({ options: { quick: { type: 'boolean', default: false } } })
// Counted once V8 has compiled the hot paths.
const WARM = flags.quick ? 4_000 : 15_000
const COUNTED = flags.quick ? 1_000 : 5_000
/**
 * Each load runs in this many server processes, two at a time, and the lowest count is the figure. In
 * some processes, and not others, the object literal Node.js makes for every process.nextTick (two of its
 * keys computed) falls to V8's runtime, about 20,000 instructions a request more: which processes is
 * chance, for bare Fastify as for the plugin. Every count is printed.
 */
const PROCESSES = 3

try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' })
} catch {
  console.log('Instructions: skipped, valgrind is not on the PATH (apt-get install valgrind)')
  process.exit(0)
}

const outDir = mkdtempSync(join(tmpdir(), 'fastify-order-instructions-'))
let servers = 0

interface Load {
  file: string
  env: Record<string, string>
  route: string
  /** The body of each request, made anew per request from the server's seeded orders. */
  body: (server: SeededServer) => () => object
  /** Pending orders to seed through the server's { seed } message; none: ten customers' orders over HTTP. */
  seed?: number
}

/** Instructions per request of `route` on a server of its own, under callgrind: counted over COUNTED requests after WARM. */
async function instructionsPerRequest ({ file, env, route, body, seed = 0 }: Load): Promise<number> {
  const out = join(outDir, `${servers++}.out`)
  const callgrind = { command: 'valgrind', args: ['-q', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`] }
  const server = await startSeeded(file, file, env, seed, callgrind)
  try {
    if (seed === 0) {
      for (let customer = 0; customer < 10; customer++) {
        const order = { customerId: `cus_${customer}`, currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unitPrice: 100 }] }
        await loadRequests(server, 'createOrder', 100, () => order)
      }
    }
    const next = body(server)
    await loadRequests(server, route, WARM, next)
    execFileSync('callgrind_control', ['--instr=on', String(server.child.pid)], { stdio: 'ignore' })
    await loadRequests(server, route, COUNTED, next)
    execFileSync('callgrind_control', ['--instr=off', String(server.child.pid)], { stdio: 'ignore' })
  } finally {
    await stopSeeded(server)
  }
  // Every thread's instructions: the collector's helpers count too.
  const totals = /^totals: (\d+)/m.exec(readFileSync(out, 'utf8'))
  if (totals === null) throw new Error(`no totals in ${out}`)
  return Number(totals[1]) / COUNTED
}

const fixed = (body: object) => () => () => body
// Each move and change takes a fresh pending order: moves the newest, changes the oldest.
const move = (server: SeededServer) => () => ({ id: server.ids.pop(), status: 'paid' })
const change = (server: SeededServer) => {
  let oldest = 0
  return () => ({ id: server.ids[oldest++], actions: changeActions })
}
const memory = { BENCH_STORAGE: 'memory' }
const changesOn = { ...memory, BENCH_CHANGES: '1' }
const changesOff = { ...memory, BENCH_CHANGES: '0' }
const fresh = WARM + COUNTED

const load = (file: string, env: Record<string, string>, route: string, body: Load['body'], seed?: number): Load => ({ file, env, route, body, seed })
const pairs: Array<{ pair: string, route: string, a: Load, b: Load }> = [
  { pair: 'plugin (memory) / bare Fastify', route: 'createOrder', a: load('plugin.ts', memory, 'createOrder', fixed(createBody)), b: load('baseline.ts', {}, 'createOrder', fixed(createBody)) },
  { pair: 'plugin (memory) / bare Fastify', route: 'getOrderList', a: load('plugin.ts', memory, 'getOrderList', fixed(pageBody)), b: load('baseline.ts', {}, 'getOrderList', fixed(pageBody)) },
  { pair: 'changes on / off (memory)', route: 'createOrder', a: load('changes.ts', changesOn, 'createOrder', fixed(createBody)), b: load('changes.ts', changesOff, 'createOrder', fixed(createBody)) },
  { pair: 'changes on / off (memory)', route: 'getOrderList', a: load('changes.ts', changesOn, 'getOrderList', fixed(pageBody), 1_000), b: load('changes.ts', changesOff, 'getOrderList', fixed(pageBody), 1_000) },
  { pair: 'changes on / off (memory)', route: 'updateOrderStatus', a: load('changes.ts', changesOn, 'updateOrderStatus', move, fresh), b: load('changes.ts', changesOff, 'updateOrderStatus', move, fresh) },
  { pair: 'changeOrder / updateOrderStatus, changes on (memory)', route: 'a change of two actions / a move', a: load('changes.ts', changesOn, 'changeOrder', change, fresh), b: load('changes.ts', changesOn, 'updateOrderStatus', move, fresh) }
]

/** The counts of `load` in PROCESSES server processes, two at a time. */
async function countsOf (load: Load): Promise<number[]> {
  const counts: number[] = []
  while (counts.length < PROCESSES) {
    const batch = Math.min(2, PROCESSES - counts.length)
    counts.push(...await Promise.all(Array.from({ length: batch }, () => instructionsPerRequest(load))))
  }
  return counts
}

console.log(`Instructions per request (valgrind --tool=callgrind), ${formatCount(COUNTED)} requests counted after ${formatCount(WARM)}, each load in ${PROCESSES} server processes of its own, the lowest count taken`)
const rows: string[][] = []
for (const { pair, route, a, b } of pairs) {
  const [counts, others] = [await countsOf(a), await countsOf(b)]
  const [first, second] = [Math.min(...counts), Math.min(...others)]
  // As the req/s ratios read: the second's cost over the first's, 1 when they cost the same.
  const ratio = second / first
  const listed = (values: number[]) => values.map(formatCount).join(', ')
  console.log(`  ${pair}, ${route}: ${listed(counts)} / ${listed(others)}; ratio ${ratio.toFixed(3)}`)
  rows.push([pair, route, formatCount(first), formatCount(second), ratio.toFixed(2)])
}
rmSync(outDir, { recursive: true, force: true })
console.log()
printTable(['pair (A / B)', 'route', 'A instructions/request', 'B instructions/request', 'B / A (as a req/s ratio reads)'], rows)
