// Pages from hot standbys: each replica's replay position sampled against the primary's, and a page sent to one that has what its caller needs.
import type { Order } from '../../http/schemas.js'
import type { ReadView, ReplicaReads, ReplicaStatus, StorageListQuery, ViewedPage } from '../order-storage.js'
import type { PostgresClient, Run } from './client.js'

/** How often the replicas' positions are sampled, in ms: a replica back in step serves again this soon. */
export const SAMPLE_INTERVAL = 100

/** How long a sample may take before its replica counts as failing, in ms. */
export const SAMPLE_TIMEOUT = 1000

/** A WAL position as PostgreSQL spells it (`16/B374D848`): a 64-bit byte offset in two hex halves. */
const LSN = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/

/** A token: `<system identifier of the primary>-<WAL position>`, at most 38 characters. */
const TOKEN = /^(\d{1,20})-([0-9A-F]{1,8}\/[0-9A-F]{1,8})$/

/** The offset of a WAL position as PostgreSQL prints it. */
export function lsnOf (text: string): bigint {
  const [, high, low] = LSN.exec(text.toUpperCase())!
  return (BigInt(`0x${high!}`) << 32n) | BigInt(`0x${low!}`)
}

/** A WAL offset spelled as PostgreSQL does. */
export function lsnText (lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`
}

/** The token of a position of the cluster `system`. */
export function tokenOf (system: string, lsn: bigint): string {
  return `${system}-${lsnText(lsn)}`
}

/** A token read back, or undefined for a string not in its form. */
export function parseToken (token: string): { system: string, lsn: bigint } | undefined {
  const fields = TOKEN.exec(token)
  return fields === null ? undefined : { system: fields[1]!, lsn: lsnOf(fields[2]!) }
}

/**
 * The primary's positions over time: the first time each was seen, oldest first, for `keep` ms. A
 * replica's lag is the time since the primary was at the position the replica has replayed.
 */
export class PositionHistory {
  private readonly samples: Array<{ lsn: bigint, at: number }> = []

  constructor (private readonly keep: number) {}

  /** The primary was at `lsn` at `at`. */
  add (lsn: bigint, at: number): void {
    const last = this.samples.at(-1)
    if (last !== undefined && last.lsn >= lsn) return
    this.samples.push({ lsn, at })
    // The oldest kept sample is the one before the window, so a lag up to `keep` is still measured.
    while (this.samples.length > 2 && this.samples[1]!.at < at - this.keep) this.samples.shift()
  }

  /** The primary's latest known position. */
  latest (): bigint | undefined {
    return this.samples.at(-1)?.lsn
  }

  /**
   * How long ago, at `now`, the primary moved past `replayed`: 0 once `replayed` is at or past its
   * latest position; the age of the oldest sample kept when every sample is past it (at least that).
   */
  lagOf (replayed: bigint, now: number): number {
    const past = this.samples.find(sample => sample.lsn > replayed)
    return past === undefined ? 0 : Math.max(0, now - past.at)
  }
}

/** `host:port` of a pg.Pool (from its options or its connection string), or undefined. */
export function replicaName (client: PostgresClient): string | undefined {
  const options = (client as { options?: { host?: unknown, port?: unknown, connectionString?: unknown } }).options
  if (typeof options !== 'object' || options === null) return undefined
  let { host, port } = options
  if (host === undefined && typeof options.connectionString === 'string') {
    try {
      const url = new URL(options.connectionString)
      host = decodeURIComponent(url.hostname) || undefined
      port = url.port === '' ? undefined : url.port
    } catch {}
  }
  if (typeof host !== 'string' || host === '') return undefined
  return `${host}:${String(port ?? 5432)}`
}

/** How one replica stands, as the sampler last saw it. */
interface Replica {
  name: string
  run: Run
  /** The position it had replayed at the last sample. */
  replayed: bigint | undefined
  lagMs: number
  /** Why it is left out: a failure, or not a standby of this primary. */
  error: string | undefined
  inUse: boolean
}

/** A failure as a short line, whatever was thrown. */
function describe (err: unknown): string {
  const message = (err as { message?: unknown } | null)?.message
  return typeof message === 'string' && message !== '' ? message : String(err)
}

/** Rejects after `ms` unless `promise` settles first. */
function within<T> (promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new Error(`no answer within ${ms} ms`)) }, ms)
  })
  return Promise.race([promise, timeout]).finally(() => { clearTimeout(timer) })
}

export interface ReplicaReadsConfig {
  /** The primary's statements. */
  primary: Run
  replicas: ReadonlyArray<{ name: string, run: Run }>
  /** ms a replica may be behind and still serve pages. */
  maxReplicaLag: number
  /** A page of orders read through `run`. */
  page: (run: Run, query: StorageListQuery) => Promise<Order[]>
  interval?: number
  timeout?: number
}

/**
 * Pages from replicas (section 19). Positions are sampled every `interval` ms once `start()` ran;
 * until the first sample, and whenever no replica has what a page needs, pages come from the primary.
 */
export function replicaReads ({ primary, replicas: given, maxReplicaLag, page, interval = SAMPLE_INTERVAL, timeout = SAMPLE_TIMEOUT }: ReplicaReadsConfig): ReplicaReads & { start: () => Promise<void>, sample: () => Promise<void> } {
  const replicas: Replica[] = given.map(({ name, run }) => ({ name, run, replayed: undefined, lagMs: 0, error: 'not sampled yet', inUse: false }))
  const history = new PositionHistory(maxReplicaLag + 10 * interval + timeout)
  let system: string | undefined
  let timer: NodeJS.Timeout | undefined
  let closed = false
  // Every replica has replayed up to here: a page never comes from one that has not (after a failure, say).
  let settledAt = 0n
  let turn = 0

  /** The primary's system identifier, once. */
  async function systemOf (): Promise<string> {
    if (system === undefined) {
      const [row] = await primary<{ system: string }>('SELECT system_identifier::text AS system FROM pg_control_system()', [])
      system = row!.system
    }
    return system
  }

  async function sampleReplica (replica: Replica): Promise<void> {
    try {
      const [row] = await within(replica.run<{ recovery: boolean, lsn: string | null, system: string }>(
        'SELECT pg_is_in_recovery() AS recovery, pg_last_wal_replay_lsn()::text AS lsn, (SELECT system_identifier::text FROM pg_control_system()) AS system', []), timeout)
      if (row!.system !== system) throw new Error(`not a standby of this primary: system identifier ${row!.system}, the primary's is ${system!}`)
      if (row!.recovery !== true || row!.lsn === null) throw new Error('not a standby: the server is not in recovery')
      const replayed = lsnOf(row!.lsn)
      replica.replayed = replica.replayed === undefined || replayed > replica.replayed ? replayed : replica.replayed
      replica.lagMs = history.lagOf(replica.replayed, Date.now())
      replica.error = undefined
      replica.inUse = replica.lagMs <= maxReplicaLag
    } catch (err) {
      replica.error = describe(err)
      replica.inUse = false
    }
  }

  /** One round: the primary's position, then every replica's. */
  async function sample (): Promise<void> {
    try {
      await systemOf()
      const [row] = await primary<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn', [])
      history.add(lsnOf(row!.lsn), Date.now())
    } catch {
      // The primary did not answer: the replicas are judged against what it said last.
    }
    if (system === undefined) return
    await Promise.all(replicas.map(sampleReplica))
  }

  function schedule (): void {
    if (closed) return
    timer = setTimeout(() => { sample().finally(schedule) }, interval)
    timer.unref()
  }

  // Writes that end in one turn of the event loop share one read of the primary's position, sent
  // after that turn: after each of them committed.
  let batch: Promise<string> | undefined
  async function readPosition (): Promise<string> {
    await new Promise(resolve => setImmediate(resolve))
    batch = undefined
    const id = await systemOf()
    const [row] = await primary<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn', [])
    return tokenOf(id, lsnOf(row!.lsn))
  }

  /** A page through `run`, with how far its view had got: `at` the position function of that server. */
  async function pageFrom (run: Run, at: string, query: StorageListQuery): Promise<{ orders: Order[], lsn: bigint | undefined }> {
    let lsn: bigint | undefined
    const viewed: Run = async <Row>(text: string, params: unknown[]) => {
      const rows = await run<Row & { fastify_order_at: string }>(`SELECT page.*, ${at}::text AS fastify_order_at FROM (${text}) AS page`, params)
      if (rows.length > 0) lsn = lsnOf(rows[0]!.fastify_order_at)
      return rows
    }
    return { orders: await page(viewed, query), lsn }
  }

  const max = (a: bigint, b: bigint | undefined) => b !== undefined && b > a ? b : a

  return {
    async start () {
      await sample()
      schedule()
    },
    sample,
    position: () => batch ?? (batch = readPosition()),
    wellFormed: token => TOKEN.test(token),
    settled (token) {
      const lsn = parseToken(token)?.lsn
      if (lsn === undefined || !replicas.every(replica => replica.replayed !== undefined && replica.replayed >= lsn)) return false
      settledAt = max(settledAt, lsn)
      return true
    },
    async list (query: StorageListQuery, { atLeast, primary: toPrimary }: ReadView): Promise<ViewedPage> {
      let floor = settledAt
      let anywhere = !toPrimary && system !== undefined
      for (const token of atLeast) {
        const read = parseToken(token)
        // A token of another database says nothing of this one's replicas.
        if (read === undefined || read.system !== system) anywhere = false
        else floor = max(floor, read.lsn)
      }
      if (anywhere) {
        const start = turn++ % replicas.length
        for (let i = 0; i < replicas.length; i++) {
          const replica = replicas[(start + i) % replicas.length]!
          if (!replica.inUse || replica.replayed! < floor) continue
          try {
            const { orders, lsn } = await pageFrom(replica.run, 'pg_last_wal_replay_lsn()', query)
            return { orders, replica: true, position: tokenOf(system!, max(max(floor, replica.replayed), lsn)) }
          } catch (err) {
            // Left out until a sample finds it answering again; this page goes on to the next.
            replica.error = describe(err)
            replica.inUse = false
          }
        }
      }
      const id = await systemOf()
      const { orders, lsn } = await pageFrom(primary, 'pg_current_wal_lsn()', query)
      return { orders, replica: false, position: tokenOf(id, max(max(floor, history.latest()), lsn)) }
    },
    health: () => replicas.map(({ name, lagMs, inUse, error }) => error === undefined ? { name, lagMs, inUse } : { name, lagMs, inUse, error } satisfies ReplicaStatus),
    close () {
      closed = true
      clearTimeout(timer)
    }
  }
}
