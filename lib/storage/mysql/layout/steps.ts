// The versions of the MySQL storage's layout, in order: a file each.
import type { Tables } from '../tables.js'
import type { SchemaStep } from './step.js'
import { version1 } from './version-1.js'
import { version2 } from './version-2.js'

export { REPEAT, type SchemaStep } from './step.js'

const STEPS = [version1, version2]

/** Every step, in order; the last one's version is the layout this release writes. */
export function schemaSteps (tables: Tables): SchemaStep[] {
  return STEPS.map(step => step(tables))
}

/** The layout version this release writes. */
export const SCHEMA_VERSION = STEPS.length
