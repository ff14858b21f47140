// An order's place in list order: (createdAt, id), compared as JavaScript compares strings.

/** A place in the (createdAt, id) order of orders; a page starts just after it. */
export interface OrderPosition {
  createdAt: string
  id: string
}

/** Ascending (createdAt, id) comparison: negative when a comes first, 0 for the same place. */
export function comparePositions (a: OrderPosition, b: OrderPosition): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1
}
