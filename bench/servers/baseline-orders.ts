// The job bare Fastify does by hand in the benchmark: orders in a Map and a per-customer array, a page
// of one customer's newest orders. The baseline server's routes call it, and so does the in-process
// measure of the plugin's own work per request (bench/request-work.ts).
import { randomUUID } from 'node:crypto'
import type { CreateOrderInput, ListOrdersQuery, Order, OrderPage } from '../../lib/index.js'

export function baselineOrders () {
  const orders = new Map<string, Order>()
  // Orders of each customer in creation order, so a newest-first page is a walk from the end.
  const byCustomer = new Map<string, Order[]>()
  let lastNumber = 0
  return {
    /** The new order, or undefined when its total is above Number.MAX_SAFE_INTEGER. */
    create (body: CreateOrderInput & { customFields?: object }): Order | undefined {
      const { customerId, currency, items, metadata = {}, customFields } = body
      let total = 0
      for (const { quantity, unitPrice } of items) total += quantity * unitPrice
      if (total > Number.MAX_SAFE_INTEGER) return undefined
      const createdAt = new Date().toISOString()
      const order: Order = {
        id: randomUUID(),
        number: ++lastNumber,
        customerId,
        status: 'pending',
        currency,
        items,
        total,
        metadata,
        version: 1,
        statusHistory: [{ status: 'pending', at: createdAt }],
        createdAt,
        updatedAt: createdAt
      }
      if (customFields !== undefined) Object.assign(order, { customFields })
      orders.set(order.id, order)
      let customerOrders = byCustomer.get(customerId)
      if (customerOrders === undefined) byCustomer.set(customerId, customerOrders = [])
      customerOrders.push(order)
      return order
    },
    /** Only what the benchmark asks for: the newest page of one customer's orders. */
    page ({ limit = 20, filter }: ListOrdersQuery): OrderPage {
      const customerOrders = byCustomer.get(filter?.customerId ?? '') ?? []
      const items: Order[] = []
      for (let index = customerOrders.length - 1; index >= 0 && items.length < limit; index--) items.push(customerOrders[index]!)
      const last = items[items.length - 1]
      const nextCursor = customerOrders.length > limit && last !== undefined
        ? Buffer.from(JSON.stringify([last.createdAt, last.id])).toString('base64url')
        : null
      return { items, nextCursor }
    }
  }
}
