// A storage with replica reads over memory, for the plugin's side of section 19: tokens are "t<n>", and a page reads "the replica" only when it needs no position.
import { memoryStorage } from '../lib/index.js'
import type { OrderStorage, ReadView, ReplicaReads } from '../lib/storage/order-storage.js'

export interface FakeReplicas {
  storage: OrderStorage
  /** Each page's view, as the plugin asked for it. */
  views: ReadView[]
  /** Tokens every replica has. */
  settled: Set<string>
  closed: number
  /** While set, each write's position waits for it, then fails with `fail` when that is set. */
  hold?: Promise<unknown>
  fail?: Error
}

export function fakeReplicaStorage (): FakeReplicas {
  const orders = memoryStorage()
  let written = 0
  const fake: FakeReplicas = { storage: orders, views: [], settled: new Set(), closed: 0 }
  const replicas: ReplicaReads = {
    async position () {
      await fake.hold
      if (fake.fail !== undefined) throw fake.fail
      return `t${++written}`
    },
    wellFormed: token => /^t\d+$/.test(token),
    async list (query, view) {
      fake.views.push(view)
      const replica = !view.primary && view.atLeast.every(token => fake.settled.has(token))
      return { orders: await orders.list(query), replica, position: `t${written}` }
    },
    settled: token => fake.settled.has(token),
    health: () => [{ name: 'standby:5432', lagMs: 1500, inUse: true }, { name: 'standby-2:5432', lagMs: 0, inUse: false, error: 'not in recovery' }],
    close: () => { fake.closed++ }
  }
  fake.storage = { ...orders, replicas }
  return fake
}
