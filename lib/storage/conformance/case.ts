// The shape of a conformance case, and the capabilities cases are grouped by.
import type { Capability, StorageWith } from '../order-storage.js'

export type { Capability }

/**
 * Runs `work` on a client inside a transaction opened on the storage's database, then commits it, or
 * rolls it back when `commit` is false: for storages that implement `joinTransaction`.
 */
export type TransactionRunner = (work: (client: unknown) => Promise<void>, commit: boolean) => Promise<void>

/** What a case may need besides the storage. */
export interface ConformanceContext {
  /** How to open a transaction on the storage's database; needed by a storage with `joinTransaction`. */
  transaction?: TransactionRunner | undefined
}

/** A storage as the cases see it: the runner only runs a case when the storage has the capability it checks. */
export type CaseStorage = StorageWith<'feed'> & StorageWith<'subscriptions'> & StorageWith<'changes'>

/** One named behaviour of OrderStorage, checked against a fresh, initialized storage. */
export interface ConformanceCase {
  /** The capability whose methods the case checks. */
  capability: Capability
  name: string
  run: (storage: CaseStorage, context: ConformanceContext) => Promise<void>
}
