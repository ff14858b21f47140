// Dead letters in memory: per subscription, each event set aside with a copy of it and its feed position.
import type { OrderEvent } from '../../feed/events.js'
import type { DeliveryOutcomes, StoredDeadLetter } from '../order-storage.js'
import { handedEvent } from './kept.js'

interface MemoryDeadLetter extends StoredDeadLetter {
  /** The event's feed position, kept after retention purged the event. */
  position: number
  /** Put back by `redeliver`, not handled yet. */
  redeliver: boolean
}

export interface MemoryDeadLetters {
  count: (name: string) => number
  /** The feed position of `eventId` when it is a dead letter of `name`. */
  positionOf: (name: string, eventId: string) => number | undefined
  /** Stores or updates the dead letters of `outcomes`, finding new ones' events with `eventAt`, and removes the delivered. */
  record: (name: string, outcomes: DeliveryOutcomes, eventAt: (eventId: string) => { event: OrderEvent, position: number } | undefined) => void
  /** The dead letters of `name` after feed position `after`, in feed order, at most `limit`; only those put back with `redeliver`. */
  list: (name: string, after: number, limit: number, redeliver?: boolean) => StoredDeadLetter[]
  redeliver: (name: string, eventIds: readonly string[] | undefined) => number
}

export function memoryDeadLetters (): MemoryDeadLetters {
  const bySubscription = new Map<string, Map<string, MemoryDeadLetter>>()
  const of = (name: string) => bySubscription.get(name) ?? new Map<string, MemoryDeadLetter>()

  return {
    count: name => of(name).size,
    positionOf: (name, eventId) => of(name).get(eventId)?.position,
    record (name, { deadLetters, delivered }, eventAt) {
      const letters = of(name)
      bySubscription.set(name, letters)
      for (const { eventId, attempts, error, at } of deadLetters) {
        const stored = letters.get(eventId)
        const found = stored ?? eventAt(eventId)
        if (found !== undefined) letters.set(eventId, { event: found.event, position: found.position, attempts, error, at, redeliver: false })
      }
      for (const eventId of delivered) letters.delete(eventId)
    },
    list (name, after, limit, redeliver) {
      return [...of(name).values()]
        .filter(letter => letter.position > after && (redeliver === undefined || letter.redeliver === redeliver))
        .sort((a, b) => a.position - b.position)
        .slice(0, limit)
        .map(({ event, attempts, error, at }) => ({ event: handedEvent(event), attempts, error, at }))
    },
    redeliver (name, eventIds) {
      const letters = of(name)
      const chosen = eventIds === undefined ? [...letters.values()] : [...new Set(eventIds)].flatMap(id => letters.get(id) ?? [])
      for (const letter of chosen) letter.redeliver = true
      return chosen.length
    }
  }
}
