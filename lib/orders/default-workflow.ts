// The default order workflow, on its own so the route schemas can read its statuses without the workflow's rules.

/** pending → paid → shipped → delivered, with cancelled and refunded as final statuses. */
export const defaultWorkflow = Object.freeze({
  initial: 'pending',
  transitions: Object.freeze({
    pending: Object.freeze(['paid', 'cancelled']),
    paid: Object.freeze(['shipped', 'cancelled', 'refunded']),
    shipped: Object.freeze(['delivered', 'refunded']),
    delivered: Object.freeze(['refunded']),
    cancelled: Object.freeze([]),
    refunded: Object.freeze([])
  })
})
