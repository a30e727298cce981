/**
 * Writes `shared/schemas/identifier-table.generated.ts` (checked in) from the Unicode data package; a test
 * (`test/unit/identifier-profile.test.ts`) fails when the checked-in table is not what this writes.
 */
import { buildIdentifierTable, identifierTableModule } from './identifier-table.ts';
import { writeIfChanged } from './write-if-changed.ts';

writeIfChanged(
  new URL('../shared/schemas/identifier-table.generated.ts', import.meta.url),
  identifierTableModule(await buildIdentifierTable()),
);
