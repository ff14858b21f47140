// updateOrderStatus with one guard on the workflow against none, on memory and each database storage.
// Run by bench/run.ts as `node --import tsx bench/guards.ts [--quick] [--storage pglite|postgres ...]`.
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { formatCount, median, printTable } from './report.js'
import type { StorageName } from './storages.js'
import { cpuTimeOf } from './servers/serve.js'

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, storage: { type: 'string', multiple: true, default: [] }, rounds: { type: 'string' } }
})
const storages: StorageName[] = ['memory', ...flags.storage as StorageName[]]
const rounds = Number(flags.rounds ?? (flags.quick ? 4 : 10))
// Each request moves a fresh order pending → paid, so a round is a number of requests, not seconds.
const perRound = (storage: StorageName) => (storage === 'memory' ? 4_000 : 1_500) / (flags.quick ? 2 : 1)

interface Server { name: string, url: string, child: ChildProcess, ids: string[] }

async function start (name: string, env: Record<string, string>, orders: number): Promise<Server> {
  const child = fork(join(import.meta.dirname, 'servers', 'guarded.ts'), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const [{ port }] = await once(child, 'message') as [{ port: number }]
  const seeded = once(child, 'message') as Promise<[{ ids: string[] }]>
  child.send({ seed: orders })
  const [{ ids }] = await seeded
  return { name, url: `http://127.0.0.1:${port}`, child, ids }
}

async function stop (server: Server): Promise<void> {
  const exited = once(server.child, 'exit')
  server.child.disconnect()
  await exited
}

interface Load {
  rate: number
  /** Server CPU microseconds per request: steadier than req/s when other work shares the machine. */
  cpu: number
}

/** Requests per second of `amount` moves, each of an order of the server's own not moved before, and their CPU cost. */
async function load (server: Server, amount: number): Promise<Load> {
  const cpuBefore = await cpuTimeOf(server.child)
  const started = performance.now()
  let answered = started
  let finish!: (result: autocannon.Result) => void
  let fail!: (err: unknown) => void
  const done = new Promise<autocannon.Result>((resolve, reject) => { finish = resolve; fail = reject })
  const run = autocannon({
    url: `${server.url}/order/updateOrderStatus`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    connections: 10,
    amount,
    requests: [{ setupRequest: request => ({ ...request, body: JSON.stringify({ id: server.ids.pop(), status: 'paid' }) }) }]
  }, (err, result) => { if (err !== null && err !== undefined) fail(err); else finish(result) })
  // autocannon ends a run at its next one-second tick: the last answer marks the end of the work.
  run.on('response', () => { answered = performance.now() })
  const result = await done
  if (result.errors > 0 || result.non2xx > 0 || result.timeouts > 0) throw new Error(`${server.name}: ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts`)
  const rate = result.requests.total / ((answered - started) / 1000)
  return { rate, cpu: (await cpuTimeOf(server.child) - cpuBefore) / result.requests.total }
}

const rows: string[][] = []
console.log(`Guards: updateOrderStatus (pending → paid, each a real move) with one guard against none, ${rounds} alternating rounds`)
for (const storage of storages) {
  const amount = perRound(storage)
  const orders = amount * (rounds + 1)
  const env = (guard: string) => ({ BENCH_STORAGE: storage, BENCH_GUARD: guard, BENCH_TABLE: `fastify_order_bench_guard_${guard}` })
  const without = await start(`${storage}, no guard`, env('0'), orders)
  const guarded = await start(`${storage}, one guard`, env('1'), orders)
  try {
    for (const server of [without, guarded]) await load(server, amount)
    const loads = new Map<Server, Load[]>([[without, []], [guarded, []]])
    const ratios: number[] = []
    const cpuRatios: number[] = []
    const last = (server: Server) => loads.get(server)!.at(-1)!
    for (let round = 1; round <= rounds; round++) {
      // A B, then B A: whatever favours one position in a round favours each server equally.
      for (const server of round % 2 === 1 ? [without, guarded] : [guarded, without]) loads.get(server)!.push(await load(server, amount))
      ratios.push(last(guarded).rate / last(without).rate)
      cpuRatios.push(last(without).cpu / last(guarded).cpu)
      console.log(`  ${storage} round ${round}: no guard ${formatCount(last(without).rate)} req/s (${last(without).cpu.toFixed(0)} µs CPU/req), one guard ${formatCount(last(guarded).rate)} req/s (${last(guarded).cpu.toFixed(0)} µs CPU/req); ratio ${ratios.at(-1)!.toFixed(3)}`)
    }
    const medianOf = (server: Server, field: keyof Load) => median(loads.get(server)!.map(measured => measured[field]))
    rows.push([storage, formatCount(medianOf(without, 'rate')), formatCount(medianOf(guarded, 'rate')), median(ratios).toFixed(2),
      `${medianOf(without, 'cpu').toFixed(0)} / ${medianOf(guarded, 'cpu').toFixed(0)}`, median(cpuRatios).toFixed(2)])
  } finally {
    await stop(without)
    await stop(guarded)
  }
}
console.log()
printTable(['storage', 'no guard req/s', 'one guard req/s', 'one guard / none (median)', 'CPU µs/req none / one guard', 'CPU ratio none / one guard (median)'], rows)
