// Ids of orders and events: unguessable, from random bytes drawn in batches (one system call per 256 ids).
import { randomFillSync } from 'node:crypto'

const entropy = Buffer.alloc(16 * 256)
let used = entropy.length

/** The offset in `entropy` of 16 fresh random bytes. */
function random16 (): number {
  if (used === entropy.length) {
    randomFillSync(entropy)
    used = 0
  }
  used += 16
  return used - 16
}

// Order ids ascend in creation order within a process, so ties on createdAt list in creation order
// and each index insert (memory or a database B-tree) is an append.
const orderId = Buffer.alloc(24)
let lastMillis = -1
let sequence = 0

/** 48 hex digits: 12 of the creation time, 4 of a per-millisecond sequence, then 128 random bits. */
export function newOrderId (millis: number): string {
  if (millis === lastMillis) sequence = (sequence + 1) & 0xffff
  else {
    lastMillis = millis
    sequence = 0
  }
  orderId.writeUIntBE(millis, 0, 6)
  orderId.writeUInt16BE(sequence, 6)
  const at = random16()
  entropy.copy(orderId, 8, at, at + 16)
  // One flat string: concatenation would keep a rope of three strings alive per stored order.
  return orderId.toString('hex')
}

// Each event id is written into one buffer and read out as one flat string (crypto.randomUUID's is a
// tree of joined pieces, several times larger in memory, which a stored event keeps for the whole retention).
const spelled = Buffer.alloc(36)
const HEX = Buffer.from('0123456789abcdef')

/** A random (version 4) UUID, as crypto.randomUUID spells it. */
export function newEventId (): string {
  const from = random16()
  entropy[from + 6] = (entropy[from + 6]! & 0x0f) | 0x40
  entropy[from + 8] = (entropy[from + 8]! & 0x3f) | 0x80
  let at = 0
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) spelled[at++] = 0x2d
    const byte = entropy[from + i]!
    spelled[at++] = HEX[byte >> 4]!
    spelled[at++] = HEX[byte & 15]!
  }
  return spelled.toString('latin1')
}
