// The versions of the storage's layout, from the one release 0.1 creates, in order: a file each.
import type { Tables } from '../tables.js'
import type { SchemaStep } from './step.js'
import { version1 } from './version-1.js'
import { version2 } from './version-2.js'
import { version3 } from './version-3.js'
import { version4 } from './version-4.js'
import { version5 } from './version-5.js'
import { version6 } from './version-6.js'
import { version7 } from './version-7.js'

export { REPEAT, type SchemaStep } from './step.js'

const STEPS = [version1, version2, version3, version4, version5, version6, version7]

/** Every step, in order; the last one's version is the layout this release writes. */
export function schemaSteps (tables: Tables): SchemaStep[] {
  return STEPS.map(step => step(tables))
}

/** The layout version this release writes. */
export const SCHEMA_VERSION = STEPS.length
