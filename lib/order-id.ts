// Order ids: unguessable, and ascending in creation order within a process, so ties on createdAt
// list in creation order and each index insert (memory or a database B-tree) is an append.
import { randomFillSync } from 'node:crypto'

// Random bytes are drawn in batches, as crypto.randomUUID does: one system call per 256 ids.
const entropy = Buffer.alloc(16 * 256)
let used = entropy.length
const id = Buffer.alloc(24)
let lastMillis = -1
let sequence = 0

/** 48 hex digits: 12 of the creation time, 4 of a per-millisecond sequence, then 128 random bits. */
export function newOrderId (millis: number): string {
  if (millis === lastMillis) sequence = (sequence + 1) & 0xffff
  else {
    lastMillis = millis
    sequence = 0
  }
  if (used === entropy.length) {
    randomFillSync(entropy)
    used = 0
  }
  id.writeUIntBE(millis, 0, 6)
  id.writeUInt16BE(sequence, 6)
  entropy.copy(id, 8, used, used + 16)
  used += 16
  // One flat string: concatenation would keep a rope of three strings alive per stored order.
  return id.toString('hex')
}
