// Ids of orders and events: unguessable, from random bytes drawn in batches (one system call per 256 ids); and the times they are stamped with.
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

// Each id is spelled into a buffer of its own and read out as one flat string (crypto.randomUUID's is a
// tree of joined pieces, several times larger in memory, which a stored order or event keeps).
const HEX = Buffer.from('0123456789abcdef')

/** Spells `count` bytes of `bytes` from `from` as hex digits into `into` at `at`; returns where it ended. */
function spellHex (into: Buffer, at: number, bytes: Buffer, from: number, count: number): number {
  for (let i = from; i < from + count; i++) {
    const byte = bytes[i]!
    into[at++] = HEX[byte >> 4]!
    into[at++] = HEX[byte & 15]!
  }
  return at
}

// Order ids ascend in creation order within a process, so ties on createdAt list in creation order
// and each index insert (memory or a database B-tree) is an append.
const orderId = Buffer.alloc(48)
const prefix = Buffer.alloc(8)
let lastMillis = -1
let sequence = 0

/** 48 hex digits: 12 of the creation time, 4 of a per-millisecond sequence, then 128 random bits. */
export function newOrderId (millis: number): string {
  if (millis === lastMillis) sequence = (sequence + 1) & 0xffff
  else {
    // The time's digits change once a millisecond.
    lastMillis = millis
    sequence = 0
    prefix.writeUIntBE(millis, 0, 6)
    spellHex(orderId, 0, prefix, 0, 6)
  }
  prefix[6] = sequence >> 8
  prefix[7] = sequence & 0xff
  spellHex(orderId, 12, prefix, 6, 2)
  spellHex(orderId, 16, entropy, random16(), 16)
  return orderId.toString('latin1')
}

let spelledMillis = Number.NaN
let spelledTime = ''

/**
 * A Date.now() time as toISOString spells it (UTC, to the millisecond). One string a millisecond:
 * the orders stamped in it share it, rather than each spelling and keeping one of its own.
 */
export function isoTime (millis: number): string {
  if (millis !== spelledMillis) {
    spelledTime = new Date(millis).toISOString()
    spelledMillis = millis
  }
  return spelledTime
}

const spelled = Buffer.alloc(36)

/** A random (version 4) UUID, as crypto.randomUUID spells it. */
export function newEventId (): string {
  const from = random16()
  entropy[from + 6] = (entropy[from + 6]! & 0x0f) | 0x40
  entropy[from + 8] = (entropy[from + 8]! & 0x3f) | 0x80
  // 8-4-4-4-12 digits.
  let at = spellHex(spelled, 0, entropy, from, 4)
  spelled[at++] = 0x2d
  at = spellHex(spelled, at, entropy, from + 4, 2)
  spelled[at++] = 0x2d
  at = spellHex(spelled, at, entropy, from + 6, 2)
  spelled[at++] = 0x2d
  at = spellHex(spelled, at, entropy, from + 8, 2)
  spelled[at++] = 0x2d
  spellHex(spelled, at, entropy, from + 10, 6)
  return spelled.toString('latin1')
}
