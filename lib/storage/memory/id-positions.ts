// The position of each stored id in an array (orders by number, the feed's events): a hash table of numbers, each hit checked against the id held there.
//
// A Map from id to position costs several times more per stored id once it holds a million: each
// insert walks a chain whose every entry reads a stored key string, far apart in memory, and the garbage
// collector marks the whole table. Here the table is one typed array (open addressing, linear probing)
// of a 32-bit hash and a position (below 2³¹ - 1: a position in an array): a probe reads the string only
// on a matching hash, and the collector never looks inside.

export interface IdPositions {
  /**
   * Records that `id` is at `position`; false, recording nothing, when a held id is this one. An id
   * recorded at a position that then holds nothing (or another id) names nothing, as a purged one.
   */
  add: (id: string, position: number) => boolean
  /** The position of the held id. */
  get: (id: string) => number | undefined
  /**
   * Makes the table anew from the ids held now, dropping the slots of those no longer held; with
   * `shift`, every position held is `shift` less than before (the array was cut at its start).
   */
  rebuild: (shift?: number) => void
}

/** FNV-1a over the id's UTF-16 code units, as the signed 32-bit integer the table holds. */
function hashOf (id: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193)
  return hash | 0
}

const FIRST_CAPACITY = 1024
// A table made anew holds four slots for each id held, and grows again once half are taken.
const GROWTH = 4

/**
 * `idAt(position)` is the id held at a position, undefined when none is (an event purged); `held()`
 * gives the positions held: from `first` up to `end`, exclusive.
 */
export function idPositions (idAt: (position: number) => string | undefined, held: () => { first: number, end: number }): IdPositions {
  let capacity = FIRST_CAPACITY
  // Two numbers a slot, side by side: the id's hash, then the position + 1 (0 in a free slot).
  let slots = new Int32Array(2 * capacity)
  // Taken slots, of held ids and of purged ones alike: the table grows before half of it is taken.
  let taken = 0

  /** The slot holding `id`, or the free slot that ends its probe (as a negative number: -1 - slot). */
  function slotOf (id: string, hash: number): number {
    const mask = capacity - 1
    let slot = hash & mask
    for (let stored = slots[2 * slot + 1]!; stored !== 0; stored = slots[2 * slot + 1]!) {
      if (slots[2 * slot] === hash && idAt(stored - 1) === id) return slot
      slot = (slot + 1) & mask
    }
    return -1 - slot
  }

  /** Takes the free slot that ends the probe of `hash` in a table whose ids all differ. */
  function put (hash: number, stored: number): void {
    const mask = capacity - 1
    let slot = hash & mask
    while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask
    slots[2 * slot] = hash
    slots[2 * slot + 1] = stored
    taken++
  }

  /** Makes the table anew, GROWTH times the size of what is held, from the slots of the ids held. */
  function rebuild (shift = 0): void {
    const { first, end } = held()
    const old = slots
    capacity = FIRST_CAPACITY
    while (capacity < (end - first) * GROWTH) capacity *= 2
    slots = new Int32Array(2 * capacity)
    taken = 0
    for (let at = 0; at < old.length; at += 2) {
      const stored = old[at + 1]! - shift
      if (stored > first) put(old[at]!, stored)
    }
  }

  return {
    add (id, position) {
      const hash = hashOf(id)
      const slot = slotOf(id, hash)
      if (slot >= 0) return false
      slots[-2 - 2 * slot] = hash
      slots[-1 - 2 * slot] = position + 1
      if (++taken * 2 > capacity) rebuild()
      return true
    },
    get (id) {
      const slot = slotOf(id, hashOf(id))
      return slot < 0 ? undefined : slots[2 * slot + 1]! - 1
    },
    rebuild
  }
}
