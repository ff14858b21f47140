// The types of custom fields: what the host declares, and how the plugin sees them whatever it declared.
import type { TSchema } from '@sinclair/typebox'

/**
 * The TypeScript types of the host's custom fields, declared once by module augmentation, the way
 * `@fastify/jwt` lets hosts type their payload (the augmenting file must import 'fastify-order'):
 *
 * ```ts
 * declare module 'fastify-order' {
 *   interface OrderCustomFields { order: Static<typeof Shipping>, item: Static<typeof Gift> }
 * }
 * ```
 *
 * Left empty, `Order`, `OrderItem` and the inputs have no `customFields` at all.
 */
export interface OrderCustomFields {}

/** A schema of objects: `Type.Object(…)`, or `Type.Record(…)`. */
export type ObjectSchema = TSchema & { type: 'object' }

/** The `customFields` option: TypeBox object schemas of the order's and each item's custom fields. */
export interface CustomFieldSchemas {
  order?: ObjectSchema
  item?: ObjectSchema
}

/**
 * A patch of custom fields, as updateOrderStatus takes it: a key given replaces its value, `null`
 * removes an optional key.
 */
export type CustomFieldsPatch<T> = {
  [K in keyof T]?: T[K] | ({} extends Pick<T, K> ? null : never)
}

/** The schema of the `customFields` option for one kind, tied to the declared type when there is one. */
export type CustomFieldsSchemaOf<K extends 'order' | 'item'> =
  OrderCustomFields extends { [P in K]: infer T } ? ObjectSchema & { static: T } : ObjectSchema

/** Custom field values as the plugin handles them, whatever the host declared: a JSON object. */
export type CustomFieldValues = Record<string, unknown>
