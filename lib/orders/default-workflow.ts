// The default order workflow, on its own so the route schemas can read its statuses without the workflow's rules.

/**
 * pending → paid → shipped → delivered, with cancelled and refunded as final statuses. Its moves are
 * typed with their statuses, so a guard of it knows which statuses a move comes from.
 */
export const defaultWorkflow = Object.freeze({
  initial: 'pending',
  transitions: Object.freeze({
    pending: Object.freeze(['paid', 'cancelled'] as const),
    paid: Object.freeze(['shipped', 'cancelled', 'refunded'] as const),
    shipped: Object.freeze(['delivered', 'refunded'] as const),
    delivered: Object.freeze(['refunded'] as const),
    cancelled: Object.freeze([]),
    refunded: Object.freeze([])
  })
})
