import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Writes `text` unless the file already holds it, so that regenerating changes no modification
 * time: `cdk.out` stays fresh for `npm start -- --bundled`, `npm run invoke` and the bundled test
 * run (`infra/local/invoke/template.ts` compares modification times) when nothing changed.
 */
export function writeIfChanged(file: URL, text: string): void {
  let current: string | undefined;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current !== text) writeFileSync(file, text);
}
