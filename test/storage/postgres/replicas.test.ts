// Replica reads without a cluster: tokens, lag arithmetic, sampling verdicts, fallback within a page, and postgresStorage's replica options.
import t from 'tap'
import type { Run } from '../../../lib/storage/postgres/client.js'
import { postgresStorage } from '../../../lib/storage/postgres/postgres-storage.js'
import { lsnOf, lsnText, parseToken, PositionHistory, replicaName, replicaReads, tokenOf } from '../../../lib/storage/postgres/replicas.js'
import { storageProblem } from '../../../lib/storage/order-storage.js'

t.test('tokens: a WAL position and the primary\'s system identifier, read back exactly; anything else is not one', async t => {
  t.equal(lsnOf('16/B374D848'), (0x16n << 32n) | 0xB374D848n)
  t.equal(lsnText(lsnOf('0/3000060')), '0/3000060')
  const token = tokenOf('7301234567890123456', lsnOf('FFFFFFFF/FFFFFFFF'))
  t.equal(token, '7301234567890123456-FFFFFFFF/FFFFFFFF')
  t.ok(token.length <= 64)
  t.same(parseToken(token), { system: '7301234567890123456', lsn: (1n << 64n) - 1n })
  for (const bad of ['', '1-0', '1-0/0/0', 'x-0/0', '1-0/123456789', '1.0/0', '-0/0', '1-0/g']) t.equal(parseToken(bad), undefined, bad)
})

t.test('lag: the time since the primary was at the replayed position, 0 once caught up', async t => {
  const history = new PositionHistory(1000)
  t.equal(history.lagOf(5n, 0), 0, 'nothing known: nothing behind')
  history.add(10n, 1000)
  history.add(10n, 1100) // the primary did not move: the first time it was seen there counts
  history.add(20n, 1200)
  history.add(30n, 1300)
  t.equal(history.latest(), 30n)
  t.equal(history.lagOf(30n, 1500), 0, 'replayed everything')
  t.equal(history.lagOf(35n, 1500), 0, 'past the last sample')
  t.equal(history.lagOf(20n, 1500), 200, 'the primary left 20 at the sample of 30')
  t.equal(history.lagOf(15n, 1500), 300)
  t.equal(history.lagOf(5n, 1500), 500, 'behind every sample: at least the oldest one\'s age')
  t.equal(history.lagOf(15n, 1000), 0, 'never negative')
  // Samples older than the window go, but one before it stays, so a long lag is still measured.
  history.add(40n, 5000)
  history.add(50n, 5100)
  t.equal(history.lagOf(5n, 5100), 3800)
})

t.test('a replica\'s name is host:port from its pool\'s options or connection string', async t => {
  t.equal(replicaName({ query: async () => ({ rows: [] }) }), undefined)
  const pool = (options: object) => Object.assign({ query: async () => ({ rows: [] }) }, { options })
  t.equal(replicaName(pool({ host: 'standby-1', port: 5433 })), 'standby-1:5433')
  t.equal(replicaName(pool({ host: 'standby-1' })), 'standby-1:5432')
  t.equal(replicaName(pool({ connectionString: 'postgres://app@standby-2:6432/shop' })), 'standby-2:6432')
  t.equal(replicaName(pool({ connectionString: 'postgres://app@standby-2/shop' })), 'standby-2:5432')
  t.equal(replicaName(pool({ connectionString: 'not a url' })), undefined)
  t.equal(replicaName(pool({ connectionString: 'postgres:///shop' })), undefined, 'a socket: no host to name')
  t.equal(replicaName(pool({ host: '' })), undefined)
  t.equal(replicaName(Object.assign({ query: async () => ({ rows: [] }) }, { options: null })), undefined)
})

/** A server as the sampler and pages see it. */
interface FakeServer {
  system: string
  lsn: bigint
  recovery: boolean
  fail?: unknown
  hang?: boolean
  gate?: Promise<void>
  pages: number
  samples: number
  run: Run
}

function fakeServer (system: string, recovery: boolean, lsn = 0n): FakeServer {
  const server: FakeServer = {
    system,
    lsn,
    recovery,
    pages: 0,
    samples: 0,
    run: (async (text: string) => {
      if (server.hang === true) return new Promise(() => {})
      if (server.gate !== undefined) await server.gate
      if (server.fail !== undefined) throw server.fail
      if (text.includes('pg_is_in_recovery') && ++server.samples > 0) return [{ recovery: server.recovery, lsn: server.recovery ? lsnText(server.lsn) : null, system: server.system }]
      if (text.includes('FROM pg_control_system()')) return [{ system: server.system }]
      if (text === 'SELECT pg_current_wal_lsn()::text AS lsn') return [{ lsn: lsnText(server.lsn) }]
      server.pages++
      return text.includes('empty') ? [] : [{ document: JSON.stringify({ on: system }), fastify_order_at: lsnText(server.lsn) }]
    }) as Run
  }
  return server
}

const page = (empty = false) => async (run: Run) => (await run<{ document: string }>(empty ? 'SELECT empty' : 'SELECT page', [])).map(row => JSON.parse(row.document))

function setUp (replicaCount = 2, maxReplicaLag = 1000) {
  const primary = fakeServer('42', false, 100n)
  const replicas = Array.from({ length: replicaCount }, () => fakeServer('42', true, 100n))
  const reads = replicaReads({
    primary: primary.run,
    replicas: replicas.map((replica, index) => ({ name: `r${index}`, run: replica.run })),
    maxReplicaLag,
    page: page(),
    interval: 5,
    timeout: 50
  })
  return { primary, replicas, reads }
}

const query = { order: 'desc' as const, limit: 10 }

t.test('pages go round the replicas in use that have what the caller needs, else to the primary', async t => {
  const { primary, replicas, reads } = setUp()
  t.same(reads.health(), [{ name: 'r0', lagMs: 0, inUse: false, error: 'not sampled yet' }, { name: 'r1', lagMs: 0, inUse: false, error: 'not sampled yet' }])
  let viewed = await reads.list(query, { atLeast: [], primary: false })
  t.equal(viewed.replica, false, 'before the first sample: the primary')
  await reads.sample()
  t.same(reads.health(), [{ name: 'r0', lagMs: 0, inUse: true }, { name: 'r1', lagMs: 0, inUse: true }])

  viewed = await reads.list(query, { atLeast: [], primary: false })
  t.equal(viewed.replica, true)
  t.equal(viewed.position, tokenOf('42', 100n))
  await reads.list(query, { atLeast: [], primary: false })
  t.same(replicas.map(replica => replica.pages), [1, 1], 'one each, in turn')

  // A write: the primary moved on, and the replicas have not replayed it.
  primary.lsn = 200n
  const token = await reads.position()
  t.equal(token, tokenOf('42', 200n))
  t.equal(reads.settled(token), false)
  viewed = await reads.list(query, { atLeast: [token], primary: false })
  t.same([viewed.replica, viewed.position], [false, tokenOf('42', 200n)], 'from the primary, at its position')
  t.equal((await reads.list(query, { atLeast: [], primary: false })).replica, true, 'without the floor, a replica')
  t.equal((await reads.list(query, { atLeast: [], primary: true })).replica, false, 'primary: true')
  t.equal((await reads.list(query, { atLeast: [tokenOf('7', 1n)], primary: false })).replica, false, 'a token of another database')
  t.equal((await reads.list(query, { atLeast: ['nonsense'], primary: false })).replica, false)

  replicas[0]!.lsn = 200n
  await reads.sample()
  t.equal(reads.settled(token), false, 'one replica has it, the other not')
  viewed = await reads.list(query, { atLeast: [token], primary: false })
  t.same([viewed.replica, viewed.orders], [true, [{ on: '42' }]], 'the replica that has it')
  replicas[1]!.lsn = 200n
  await reads.sample()
  t.equal(reads.settled(token), true, 'every replica has it')
  t.equal(reads.settled('nonsense'), false)
  t.ok(reads.wellFormed(token))
  t.notOk(reads.wellFormed('x'))
})

t.test('a replica failing a page is left out and the page served by the next, or the primary; it returns once sampled answering', async t => {
  const { replicas, reads } = setUp()
  await reads.sample()
  replicas[0]!.fail = new Error('connection terminated')
  replicas[1]!.fail = 'not an Error'
  const viewed = await reads.list(query, { atLeast: [], primary: false })
  t.equal(viewed.replica, false, 'both failed within the page: the primary served it')
  t.match(reads.health(), [{ inUse: false, error: 'connection terminated' }, { inUse: false, error: 'not an Error' }])
  replicas[1]!.fail = { message: '' }
  await reads.sample()
  t.match(reads.health(), [{ error: 'connection terminated' }, { error: '[object Object]' }])
  delete replicas[0]!.fail
  delete replicas[1]!.fail
  replicas[1]!.hang = true
  await reads.sample()
  t.match(reads.health(), [{ inUse: true }, { inUse: false, error: 'no answer within 50 ms' }], 'a replica that does not answer')
  t.equal((await reads.list(query, { atLeast: [], primary: false })).replica, true)
})

t.test('a replica behind by more than maxReplicaLag, of another primary, or not in recovery is left out', async t => {
  const { primary, replicas, reads } = setUp(3, 20)
  replicas[1]!.system = '7'
  replicas[2]!.recovery = false
  await reads.sample()
  const [behind, other, notStandby] = reads.health()
  t.same(behind, { name: 'r0', lagMs: 0, inUse: true })
  t.match(other, { inUse: false, error: 'not a standby of this primary: system identifier 7, the primary\'s is 42' })
  t.match(notStandby, { inUse: false, error: 'not a standby: the server is not in recovery' })
  primary.lsn = 300n
  await reads.sample()
  await new Promise(resolve => setTimeout(resolve, 40))
  await reads.sample()
  t.match(reads.health()[0], { inUse: false }, 'behind by more than 20 ms')
  t.ok(reads.health()[0]!.lagMs > 20)
  replicas[0]!.lsn = 300n
  // A replayed position never goes back, whatever a sample says.
  await reads.sample()
  replicas[0]!.lsn = 250n
  await reads.sample()
  t.same(reads.health()[0], { name: 'r0', lagMs: 0, inUse: true })
})

t.test('a primary that does not answer a sample: the replicas are judged on what it said last; unknown, not at all', async t => {
  const { primary, reads } = setUp(1)
  primary.fail = new Error('down')
  await reads.sample()
  t.match(reads.health(), [{ error: 'not sampled yet' }], 'the primary\'s system is not known yet')
  delete primary.fail
  await reads.sample()
  primary.fail = new Error('down')
  await reads.sample()
  t.match(reads.health(), [{ inUse: true }])
  await t.rejects(reads.position(), { message: 'down' })
  await t.rejects(reads.list(query, { atLeast: [], primary: true }), { message: 'down' })
})

t.test('writes that end in one turn share one read of the primary\'s position, sent after that turn', async t => {
  const { primary, reads } = setUp(1)
  let reading = 0
  const run = primary.run
  primary.run = (async (text: string, params: unknown[]) => {
    if (text.includes('pg_current_wal_lsn')) reading++
    return run(text, params)
  }) as Run
  const again = replicaReads({ primary: primary.run, replicas: [], maxReplicaLag: 1, page: page() })
  const tokens = await Promise.all([again.position(), again.position(), again.position(), again.position()])
  t.equal(reading, 1, 'one read for the calls of one turn')
  t.same(new Set(tokens), new Set([tokenOf('42', 100n)]))
  t.equal(await again.position(), tokenOf('42', 100n))
  primary.fail = new Error('down')
  const failed = [again.position(), again.position()]
  await t.rejects(failed[0]!)
  await t.rejects(failed[1]!)
  delete primary.fail
  t.equal(await again.position(), tokenOf('42', 100n), 'reads again after a failure')
  reads.close()
})

t.test('an empty page is at the replica\'s or primary\'s known position; sampling runs on a timer until closed', async t => {
  const primary = fakeServer('42', false, 100n)
  const replica = fakeServer('42', true, 100n)
  const reads = replicaReads({ primary: primary.run, replicas: [{ name: 'r', run: replica.run }], maxReplicaLag: 1000, page: page(true), interval: 5 })
  await reads.start()
  t.same(await reads.list(query, { atLeast: [], primary: false }), { orders: [], replica: true, position: tokenOf('42', 100n) })
  t.same(await reads.list(query, { atLeast: [], primary: true }), { orders: [], replica: false, position: tokenOf('42', 100n) })
  primary.lsn = 150n
  replica.lsn = 150n
  for (let i = 0; i < 200 && reads.health()[0]!.lagMs === 0 && (await reads.list(query, { atLeast: [], primary: false })).position !== tokenOf('42', 150n); i++) {
    await new Promise(resolve => setTimeout(resolve, 5))
  }
  t.equal((await reads.list(query, { atLeast: [], primary: false })).position, tokenOf('42', 150n), 'the timer sampled the new position')
  // Closed while a sample is under way: no sample is scheduled after it.
  let open!: () => void
  primary.gate = new Promise(resolve => { open = resolve })
  await new Promise(resolve => setTimeout(resolve, 20))
  reads.close()
  reads.close()
  open()
  delete primary.gate
  await new Promise(resolve => setTimeout(resolve, 20))
  const samples = replica.samples
  await new Promise(resolve => setTimeout(resolve, 20))
  t.equal(replica.samples, samples, 'no sample after close')
})

t.test('postgresStorage checks its replica options', async t => {
  const client = { query: async () => ({ rows: [] }) }
  const replica = () => ({ query: async () => ({ rows: [] }) })
  t.equal(postgresStorage({ client }).replicas, undefined, 'no replicas: no capability')
  t.equal(postgresStorage({ client, maxReplicaLag: 10 }).replicas, undefined)
  const storage = postgresStorage({ client, replicas: [replica(), Object.assign(replica(), { options: { host: 'standby', port: 5433 } })] })
  t.same(storage.replicas!.health().map(({ name }) => name), ['replica 1', 'standby:5433'])
  t.equal(storageProblem(storage), undefined)
  const fails = (options: object, message: RegExp) => t.throws(() => postgresStorage({ client, ...options }), { code: 'ORDER_INVALID_OPTIONS', message })
  fails({ replicas: replica() }, /replicas must be an array of pg\.Pool/)
  fails({ replicas: [replica(), {}] }, /replicas\[1\] must be a pg\.Pool on a hot standby/)
  fails({ replicas: [null] }, /replicas\[0\] must be/)
  fails({ replicas: [client] }, /replicas\[0\] is the primary client/)
  const twice = replica()
  fails({ replicas: [twice, twice] }, /replicas\[1\] is given twice/)
  const named = () => Object.assign(replica(), { options: { host: 'standby' } })
  fails({ replicas: [named(), named()] }, /two replicas reach standby:5432/)
  fails({ replicas: [replica()], maxReplicaLag: -1 }, /maxReplicaLag must be an integer from 0 to 2147483647 ms, got -1/)
  fails({ replicas: [replica()], maxReplicaLag: 1.5 }, /maxReplicaLag must be an integer/)
  t.match(storageProblem({ ...storage, replicas: { ...storage.replicas, settled: 1 } }), /storage\.replicas\.settled must be a function/)
})
