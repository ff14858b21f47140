// The statuses of orders as a host's types see them: those of the workflow it declared, or any string.

type TransitionsOf<W> = W extends { readonly transitions: infer T } ? T : never
/** The statuses of a workflow: with one declared `as const`, the union of its status names. */
export type StatusOf<W extends { readonly transitions: object }> = keyof TransitionsOf<W> & string

/**
 * The workflow whose statuses orders carry in the host's types, declared once by module augmentation
 * (the augmenting file must import 'fastify-order'), with a workflow declared `as const`:
 *
 * ```ts
 * declare module 'fastify-order' {
 *   interface OrderStatuses { workflow: typeof shop }
 * }
 * ```
 *
 * `Order` (its `status` and its history's), the inputs, events, listeners and `app.orders` then carry
 * the union of its statuses, and the `workflow` option must have them. Left empty, statuses are strings.
 */
export interface OrderStatuses {}

/** A status of an order: one of the declared workflow's (`OrderStatuses`), or any string without one. */
export type OrderStatus = OrderStatuses extends { workflow: infer W extends { readonly transitions: object } } ? StatusOf<W> : string
