// Order ids: unguessable, and ascending in creation order within a process, so ties on createdAt
// list in creation order and each index insert (memory or a database B-tree) is an append.
import { randomUUID } from 'node:crypto'

let lastMillis = -1
let sequence = 0

/** 12 hex digits of the creation time, 4 of a per-millisecond sequence, then 122 random bits. */
export function newOrderId (millis: number): string {
  if (millis === lastMillis) sequence = (sequence + 1) & 0xffff
  else {
    lastMillis = millis
    sequence = 0
  }
  return millis.toString(16).padStart(12, '0') + sequence.toString(16).padStart(4, '0') + randomUUID().replaceAll('-', '')
}
