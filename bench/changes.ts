// Changes after placement: a change of two actions against updateOrderStatus on a server with changes
// on, and createOrder, getOrderList and updateOrderStatus with changes on against off, on memory and
// each database storage. Run by bench/run.ts as
// `node --import tsx bench/changes.ts [--quick] [--storage pglite|postgres|mysql ...] [--rounds n]`.
import { parseArgs } from 'node:util'
import { changeActions, createBody, pageBody } from './bodies.js'
import { formatCount, median, printTable } from './report.js'
import { loadRequests, startSeeded, stopSeeded, type Load, type SeededServer } from './seeded-servers.js'
import type { StorageName } from './storages.js'

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, storage: { type: 'string', multiple: true, default: [] }, rounds: { type: 'string' } }
})
const storages: StorageName[] = ['memory', ...flags.storage as StorageName[]]
const rounds = Number(flags.rounds ?? (flags.quick ? 4 : 10))
// A round is a number of requests, not seconds: each move and each change takes a fresh order. Creates
// and pages take none, and run three times as many, so that their shorter requests are timed as long.
const perRound = (storage: StorageName) => (storage === 'memory' ? 4_000 : 1_500) / (flags.quick ? 2 : 1)
const CREATES_AND_PAGES_PER_MOVE = 3

/** One measured load: which server, which route, the body of each request, and how many a round sends. */
interface Workload { name: string, server: SeededServer, route: string, body: () => object, amount: number }

// Moves take the newest orders left and changes the oldest, so that the orders a server with changes on
// has changed (still pending) never sit among those its moves take: each move finds the order where a
// move on the server with changes off finds it.
const moveOf = (server: SeededServer) => () => ({ id: server.ids.pop(), status: 'paid' })
const changeOf = (server: SeededServer) => {
  let oldest = 0
  return () => ({ id: server.ids[oldest++], actions: changeActions })
}
// The server with changes off writes as often: while the other changes an order, it cancels one (the
// oldest, as changes take), so that both hold as many order versions and events round after round, and
// neither server's later loads pay for a larger heap than the other's.
const cancelOf = (server: SeededServer) => {
  let oldest = 0
  return () => ({ id: server.ids[oldest++], status: 'cancelled' })
}

const changeRows: string[][] = []
const routeRows: string[][] = []
console.log(`Changes: a change of two actions (setQuantity, recordPayment) against updateOrderStatus with changes on, and the three routes with changes on against off, ${rounds} alternating rounds`)
for (const storage of storages) {
  const amount = perRound(storage)
  const env = (changes: string) => ({ BENCH_STORAGE: storage, BENCH_CHANGES: changes, BENCH_TABLE: `fastify_order_bench_changes_${changes}` })
  // The warmup and every round take `amount` fresh orders per move and per change (or cancel, on the
  // server with changes off), so that their pages are read among as many.
  const orders = 2 * amount * (rounds + 1)
  const on = await startSeeded(`${storage}, changes on`, 'changes.ts', env('1'), orders)
  const off = await startSeeded(`${storage}, changes off`, 'changes.ts', env('0'), orders)
  const workloads: Workload[] = [
    { name: 'move, on', server: on, route: 'updateOrderStatus', body: moveOf(on), amount },
    { name: 'change, on', server: on, route: 'changeOrder', body: changeOf(on), amount },
    { name: 'cancel, off', server: off, route: 'updateOrderStatus', body: cancelOf(off), amount },
    { name: 'move, off', server: off, route: 'updateOrderStatus', body: moveOf(off), amount },
    { name: 'create, on', server: on, route: 'createOrder', body: () => createBody, amount: amount * CREATES_AND_PAGES_PER_MOVE },
    { name: 'create, off', server: off, route: 'createOrder', body: () => createBody, amount: amount * CREATES_AND_PAGES_PER_MOVE },
    { name: 'page, on', server: on, route: 'getOrderList', body: () => pageBody, amount: amount * CREATES_AND_PAGES_PER_MOVE },
    { name: 'page, off', server: off, route: 'getOrderList', body: () => pageBody, amount: amount * CREATES_AND_PAGES_PER_MOVE }
  ]
  try {
    for (const workload of workloads) await loadRequests(workload.server, workload.route, workload.amount, workload.body)
    const loads = new Map<string, Load[]>(workloads.map(workload => [workload.name, []]))
    const ratios = new Map<string, number[]>()
    const last = (name: string) => loads.get(name)!.at(-1)!
    const ratio = (name: string, a: string, b: string) => {
      ratios.set(name, [...ratios.get(name) ?? [], last(a).rate / last(b).rate])
      return ratios.get(name)!.at(-1)!.toFixed(3)
    }
    for (let round = 1; round <= rounds; round++) {
      // Forwards, then backwards: whatever favours one position in a round favours each load equally.
      for (const workload of round % 2 === 1 ? workloads : [...workloads].reverse()) {
        loads.get(workload.name)!.push(await loadRequests(workload.server, workload.route, workload.amount, workload.body))
      }
      console.log(`  ${storage} round ${round}: ${workloads.map(({ name }) => `${name} ${formatCount(last(name).rate)} req/s (${last(name).cpu.toFixed(0)} µs)`).join(', ')}; ` +
        `change / move ${ratio('change', 'change, on', 'move, on')}, on / off: move ${ratio('updateOrderStatus', 'move, on', 'move, off')}, ` +
        `create ${ratio('createOrder', 'create, on', 'create, off')}, page ${ratio('getOrderList', 'page, on', 'page, off')}`)
    }
    const medianOf = (name: string, field: keyof Load) => median(loads.get(name)!.map(measured => measured[field]))
    const cpuOf = (a: string, b: string) => `${medianOf(a, 'cpu').toFixed(0)} / ${medianOf(b, 'cpu').toFixed(0)}`
    // Over all rounds: every request of a load over the time they took together (each round sends as
    // many). A collection of the old generation lands in one round and makes it several times slower
    // than the others; the median of the rounds leaves it out or keeps it by chance, this counts it once.
    const overall = (name: string) => loads.get(name)!.length / loads.get(name)!.reduce((sum, { rate }) => sum + 1 / rate, 0)
    const overallRatio = (a: string, b: string) => (overall(a) / overall(b)).toFixed(2)
    changeRows.push([storage, formatCount(medianOf('move, on', 'rate')), formatCount(medianOf('change, on', 'rate')), median(ratios.get('change')!).toFixed(2),
      overallRatio('change, on', 'move, on'), cpuOf('move, on', 'change, on')])
    for (const [route, on, off] of [['createOrder', 'create, on', 'create, off'], ['getOrderList', 'page, on', 'page, off'], ['updateOrderStatus', 'move, on', 'move, off']] as const) {
      routeRows.push([route, storage, formatCount(medianOf(off, 'rate')), formatCount(medianOf(on, 'rate')), median(ratios.get(route)!).toFixed(2), overallRatio(on, off), cpuOf(off, on)])
    }
  } finally {
    await stopSeeded(on)
    await stopSeeded(off)
  }
}
console.log()
printTable(['storage', 'updateOrderStatus req/s', 'change of two actions req/s', 'change / move (median)', 'change / move (all rounds)', 'CPU µs/req move / change'], changeRows)
console.log()
printTable(['route', 'storage', 'changes off req/s', 'changes on req/s', 'on / off (median)', 'on / off (all rounds)', 'CPU µs/req off / on'], routeRows)
