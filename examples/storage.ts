// Storage for the examples: orders in memory, gone when the process exits.
import { memoryStorage, type OrderStorage } from '../lib/index.js'

export async function createExampleStorage (): Promise<{ storage: OrderStorage, close: () => Promise<void> }> {
  return { storage: memoryStorage(), close: async () => {} }
}
