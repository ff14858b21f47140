// The storage-adapter conformance suite: what every OrderStorage must do, runnable from any test runner.
import assert from 'node:assert/strict'
import { storageMethods, type OrderStorage } from '../storage/types.js'
import type { Capability, ConformanceCase, TransactionRunner } from './case.js'
import { feedCases } from './feed.js'
import { numberCases } from './numbers.js'
import { orderCases } from './orders.js'
import { subscriptionCases } from './subscriptions.js'
import { transactionCases } from './transactions.js'

export type { Capability, ConformanceCase, ConformanceContext, TransactionRunner } from './case.js'

/** A case per capability that its methods are there, before the cases that use them. */
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

/** Every case: that the methods are there, then orders, the event feed and subscriptions. */
export const conformanceCases: readonly ConformanceCase[] = Object.freeze([
  methodsCase('orders'), methodsCase('feed'), methodsCase('subscriptions'),
  ...orderCases, ...numberCases, ...transactionCases, ...feedCases, ...subscriptionCases
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

/**
 * Runs every conformance case (but those skipped by name or capability) in turn, each on a fresh
 * storage from `factory` after its `init`; rejects with an AggregateError naming every failed case.
 */
export async function runConformance (factory: () => OrderStorage | Promise<OrderStorage>, options: ConformanceOptions = {}): Promise<void> {
  const skip = new Set(options.skip)
  const skipCapabilities = new Set<string>(options.skipCapabilities)
  const unknown = [
    ...[...skip].filter(name => !conformanceCases.some(conformanceCase => conformanceCase.name === name))
      .map(name => `no conformance case is named ${JSON.stringify(name)}`),
    ...[...skipCapabilities].filter(capability => !Object.hasOwn(storageMethods, capability))
      .map(capability => `no capability is named ${JSON.stringify(capability)}; capabilities are ${Object.keys(storageMethods).join(', ')}`)
  ]
  if (unknown.length > 0) throw new TypeError(`runConformance: ${unknown.join('; ')}`)
  const failed: string[] = []
  const failures: Error[] = []
  const ran = conformanceCases.filter(({ name, capability }) => !skip.has(name) && !skipCapabilities.has(capability))
  for (const { name, run } of ran) {
    try {
      const storage = await factory()
      await storage.init?.()
      await run(storage, { transaction: options.transaction })
    } catch (err) {
      failed.push(JSON.stringify(name))
      failures.push(new Error(`${name}: ${err instanceof Error ? err.message : String(err)}`, { cause: err }))
    }
  }
  if (failures.length > 0) {
    throw new AggregateError(failures, `${failures.length} of ${ran.length} storage conformance cases failed: ${failed.join(', ')}`)
  }
}
