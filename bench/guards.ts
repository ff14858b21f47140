// updateOrderStatus with one guard on the workflow against none, on memory and each database storage.
// Run by bench/run.ts as `node --import tsx bench/guards.ts [--quick] [--storage pglite|postgres ...]`.
import { parseArgs } from 'node:util'
import { formatCount, median, printTable } from './report.js'
import { loadRequests, startSeeded, stopSeeded, type Load, type SeededServer } from './seeded-servers.js'
import type { StorageName } from './storages.js'

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, storage: { type: 'string', multiple: true, default: [] }, rounds: { type: 'string' } }
})
const storages: StorageName[] = ['memory', ...flags.storage as StorageName[]]
const rounds = Number(flags.rounds ?? (flags.quick ? 4 : 10))
// Each request moves a fresh order pending → paid, so a round is a number of requests, not seconds.
const perRound = (storage: StorageName) => (storage === 'memory' ? 4_000 : 1_500) / (flags.quick ? 2 : 1)

const start = (name: string, env: Record<string, string>, orders: number) => startSeeded(name, 'guarded.ts', env, orders)
// Each request moves a fresh order of the server's own to paid.
const load = (server: SeededServer, amount: number) => loadRequests(server, 'updateOrderStatus', amount, () => ({ id: server.ids.pop(), status: 'paid' }))

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
    const loads = new Map<SeededServer, Load[]>([[without, []], [guarded, []]])
    const ratios: number[] = []
    const cpuRatios: number[] = []
    const last = (server: SeededServer) => loads.get(server)!.at(-1)!
    for (let round = 1; round <= rounds; round++) {
      // A B, then B A: whatever favours one position in a round favours each server equally.
      for (const server of round % 2 === 1 ? [without, guarded] : [guarded, without]) loads.get(server)!.push(await load(server, amount))
      ratios.push(last(guarded).rate / last(without).rate)
      cpuRatios.push(last(without).cpu / last(guarded).cpu)
      console.log(`  ${storage} round ${round}: no guard ${formatCount(last(without).rate)} req/s (${last(without).cpu.toFixed(0)} µs CPU/req), one guard ${formatCount(last(guarded).rate)} req/s (${last(guarded).cpu.toFixed(0)} µs CPU/req); ratio ${ratios.at(-1)!.toFixed(3)}`)
    }
    const medianOf = (server: SeededServer, field: keyof Load) => median(loads.get(server)!.map(measured => measured[field]))
    rows.push([storage, formatCount(medianOf(without, 'rate')), formatCount(medianOf(guarded, 'rate')), median(ratios).toFixed(2),
      `${medianOf(without, 'cpu').toFixed(0)} / ${medianOf(guarded, 'cpu').toFixed(0)}`, median(cpuRatios).toFixed(2)])
  } finally {
    await stopSeeded(without)
    await stopSeeded(guarded)
  }
}
console.log()
printTable(['storage', 'no guard req/s', 'one guard req/s', 'one guard / none (median)', 'CPU µs/req none / one guard', 'CPU ratio none / one guard (median)'], rows)
