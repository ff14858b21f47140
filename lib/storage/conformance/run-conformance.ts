// The storage-adapter conformance suite: what every OrderStorage must do, runnable from any test runner, honest about what it skips.
import assert from 'node:assert/strict'
import { storageMethods, type OrderStorage } from '../order-storage.js'
import type { Capability, CaseStorage, ConformanceCase, TransactionRunner } from './case.js'
import { changeCases } from './change-cases.js'
import { deliveryCases } from './delivery-cases.js'
import { feedCases } from './feed-cases.js'
import { numberCases } from './number-cases.js'
import { orderCases } from './order-cases.js'
import { storeCases } from './store-cases.js'
import { subscriptionCases } from './subscription-cases.js'
import { transactionCases } from './transaction-cases.js'

export type { Capability, ConformanceCase, ConformanceContext, TransactionRunner } from './case.js'

/** A case per capability that its methods are there, all of them, before the cases that use them. */
function methodsCase (capability: Capability): ConformanceCase {
  return {
    capability,
    name: `the ${capability} methods exist`,
    async run (storage) {
      for (const method of storageMethods[capability]) {
        assert.equal(typeof storage[method], 'function', `storage.${method} must be a function`)
      }
      assert.ok(['undefined', 'function'].includes(typeof storage.init), 'storage.init must be a function when present')
    }
  }
}

/** Every case: that the methods are there, then orders, numbers, stores, joining a transaction, the event feed, subscriptions and their deliveries, changes after placement. */
export const conformanceCases: readonly ConformanceCase[] = Object.freeze([
  ...(Object.keys(storageMethods) as Capability[]).map(methodsCase),
  ...orderCases, ...numberCases, ...storeCases, ...transactionCases, ...feedCases, ...subscriptionCases, ...deliveryCases, ...changeCases
])

export interface ConformanceOptions {
  /** Names of cases not to run; a name no case has is an error, so a typo cannot skip silently. */
  skip?: readonly string[]
  /** Capabilities whose cases not to run, for an adapter that implements only some of them. */
  skipCapabilities?: readonly Capability[]
  /**
   * How to run work in a transaction on the storage's database, for an adapter that implements
   * `joinTransaction`: the cases of joining a transaction need it, and fail without it.
   */
  transaction?: TransactionRunner
}

/** What a run of the suite did: the cases that passed, and those skipped with why. Failures reject. */
export interface ConformanceReport {
  passed: string[]
  skipped: Array<{ name: string, reason: string }>
}

/** Why `options` skip the case, before any storage is made. */
function skippedByOptions ({ name, capability }: ConformanceCase, options: ConformanceOptions): string | undefined {
  if (options.skip?.includes(name) === true) return 'named in the skip option'
  if (options.skipCapabilities?.includes(capability) === true) return `its capability "${capability}" is in the skipCapabilities option`
  return undefined
}

/**
 * Runs one case on a fresh storage from `factory` after its `init`. Resolves with the reason it was
 * skipped (the options skip it, or the storage has none of its capability's methods: an adapter
 * without the feed, subscriptions or joining a transaction), or undefined when it passed; rejects
 * with the failure. For running each case as a test of your own runner.
 */
export async function runConformanceCase (
  conformanceCase: ConformanceCase,
  factory: () => OrderStorage | Promise<OrderStorage>,
  options: ConformanceOptions = {}
): Promise<string | undefined> {
  const skipped = skippedByOptions(conformanceCase, options)
  if (skipped !== undefined) return skipped
  const storage = await factory()
  const { capability } = conformanceCase
  // A storage has a capability whole or not at all; with none of its methods, its cases do not apply.
  // The orders are every storage's, and some methods of a capability are a failure, not a skip.
  if (capability !== 'orders' && !storageMethods[capability].some(method => typeof storage[method] === 'function')) {
    return `the storage has no ${storageMethods[capability].join(', ')}: it does not implement the "${capability}" capability`
  }
  await storage.init?.()
  await conformanceCase.run(storage as CaseStorage, { transaction: options.transaction })
  return undefined
}

/**
 * Runs every conformance case in turn, each on a fresh storage from `factory` after its `init`.
 * Resolves to a report of the cases that passed and those skipped, with why; rejects with an
 * AggregateError naming every failed case (its `report` holds what passed and was skipped).
 */
export async function runConformance (factory: () => OrderStorage | Promise<OrderStorage>, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const unknown = [
    ...(options.skip ?? []).filter(name => !conformanceCases.some(conformanceCase => conformanceCase.name === name))
      .map(name => `no conformance case is named ${JSON.stringify(name)}`),
    ...(options.skipCapabilities ?? []).filter(capability => !Object.hasOwn(storageMethods, capability))
      .map(capability => `no capability is named ${JSON.stringify(capability)}; capabilities are ${Object.keys(storageMethods).join(', ')}`)
  ]
  if (unknown.length > 0) throw new TypeError(`runConformance: ${unknown.join('; ')}`)
  const report: ConformanceReport = { passed: [], skipped: [] }
  const failures: Error[] = []
  const failed: string[] = []
  for (const conformanceCase of conformanceCases) {
    const { name } = conformanceCase
    try {
      const reason = await runConformanceCase(conformanceCase, factory, options)
      if (reason === undefined) report.passed.push(name)
      else report.skipped.push({ name, reason })
    } catch (err) {
      failed.push(JSON.stringify(name))
      failures.push(new Error(`${name}: ${err instanceof Error ? err.message : String(err)}`, { cause: err }))
    }
  }
  if (failures.length > 0) {
    const ran = failures.length + report.passed.length
    throw Object.assign(new AggregateError(failures, `${failures.length} of ${ran} storage conformance cases failed: ${failed.join(', ')}`), { report })
  }
  return report
}
