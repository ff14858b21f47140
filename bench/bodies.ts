// The request bodies the benchmarks send: a create of two lines, the page of one customer, and a change of two actions.
export const createBody = {
  customerId: 'cus_bench',
  currency: 'EUR',
  items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }, { sku: 'B-2', quantity: 1, unitPrice: 990 }],
  metadata: { channel: 'web', campaign: 'spring' }
}

export const pageBody = { limit: 20, filter: { customerId: 'cus_3' } }

/** One mug fewer and the payment of what is left: two actions that apply to every fresh order of the seeded servers. */
export const changeActions = [{ type: 'setQuantity', index: 0, quantity: 1 }, { type: 'recordPayment', amount: 1250, reference: 'pi_bench' }]
