// Scope: what a caller may see and touch. With a customerId, only that customer's orders.

/** What a caller may see and touch: with a `customerId`, only that customer's orders. */
export interface OrderScope {
  customerId?: string
}
