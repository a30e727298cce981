import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultServiceSettings } from '#infra/environment.ts';
import { idempotencyKeyOf } from '#shared/http/idempotency-key.ts';
import { openApiJson } from '#shared/openapi.generated.js';
import { validatePet } from '#shared/schemas/validators.generated.js';
import { formatMinor, parseAmount } from '#shared/wallet/model/money.ts';

type Json = Record<string, unknown>;
const document = JSON.parse(openApiJson) as Json;
/** The document's node at `path`, typed as the test reads it. */
const at = <T>(path: readonly string[]): T =>
  path.reduce<unknown>((node, key) => (node as Json)[key], document) as T;
// A JSON Schema validator reading the document as any client's would: lengths in code points.
const reader = new Ajv({ strict: false, allErrors: true, formats: { int64: true, 'date-time': true } });
reader.addSchema(document, 'doc');
const byDocument = (pointer: string) => reader.compile({ $ref: `doc#${pointer}` });
/** The document's schema at a JSON pointer into it. */
const documentSchemaOf = (pointer: string) => at<unknown>(pointer.split('/').slice(1));

describe('the OpenAPI document and the server agree', () => {
  it('count string lengths alike, in code points: 200 emoji are a valid pet name on both sides, 201 on neither', () => {
    const documentPet = byDocument('/components/schemas/Pet');
    for (const [count, valid] of [
      [200, true],
      [201, false],
    ] as const) {
      const pet = { name: '🐕'.repeat(count), photoUrls: [] };
      expect(validatePet(pet), `server, ${count}`).toBe(valid);
      expect(documentPet(pet), `document, ${count}`).toBe(valid);
    }
  });

  it('refuse control characters, bidirectional overrides and lone surrogates in every text of a pet, and take other Unicode', () => {
    const documentPet = byDocument('/components/schemas/Pet');
    const at = (text: string) => [
      { name: text, photoUrls: [] },
      { name: 'rex', photoUrls: [`https://example.com/${text}`] },
      { name: 'rex', photoUrls: [], tags: [{ name: text }] },
      { name: 'rex', photoUrls: [], category: { name: text } },
    ];
    for (const bad of [
      '\u0000',
      '\u0007',
      'a\nb',
      '\u001b[31m',
      '\u007f',
      '\u0085',
      'abc\u202eexe.gpj',
      '\u2066x',
      '\ud800',
      'a\udfffb',
    ]) {
      for (const pet of at(bad)) {
        expect(validatePet(pet), `server, ${JSON.stringify(pet)}`).toBe(false);
        expect(documentPet(pet), `document, ${JSON.stringify(pet)}`).toBe(false);
      }
    }
    // A reader without the `u` flag (Swagger UI's `new RegExp(pattern)`) reads the pattern alike.
    const schemaPattern = (
      documentSchemaOf('/components/schemas/Pet') as { properties: { name: { pattern: string } } }
    ).properties.name.pattern;
    const flagless = new RegExp(schemaPattern);
    for (const bad of ['\u0000', '\u0085', 'abc\u202eexe.gpj', '\ud800', 'a\udfffb', '\udc00\ud800']) {
      expect(flagless.test(bad), JSON.stringify(bad)).toBe(false);
    }
    for (const good of ['Rex', 'café', '🐕‍🦺', 'ポチ', '\u{1F600}', '\u{10FFFD}']) {
      expect(flagless.test(good), JSON.stringify(good)).toBe(true);
    }
    for (const good of ['Rex', 'café', 'café', '🐕‍🦺', 'ポチ', 'a b\u00a0c', '\u{1F600}']) {
      for (const pet of at(good)) {
        expect(validatePet(pet), `server, ${JSON.stringify(pet)}`).toBe(true);
        expect(documentPet(pet), `document, ${JSON.stringify(pet)}`).toBe(true);
      }
    }
  });

  it('accept the same Idempotency-Keys: what the pattern allows the server accepts, what it refuses the pattern refuses', () => {
    const send = at(['paths', '/api/wallet/send', 'post']) as {
      parameters: { name: string; schema: Json }[];
    };
    const schema = send.parameters.find((p) => p.name === 'Idempotency-Key')?.schema as unknown as object;
    const documentKey = reader.compile(schema);
    // Quoted forms (a structured-field string) among them: `""` is the empty key, which the server refuses.
    const quoted = fc.constantFrom('""', '"a"', '"', 'a"', '"a', `"${'a'.repeat(253)}"`);
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300, unit: 'binary-ascii' }), quoted), (key) => {
        if (documentKey(key)) expect(() => idempotencyKeyOf([key]), key).not.toThrow();
      }),
      { examples: [['""'], ['"a"']] },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (key) => {
        let accepted = true;
        try {
          idempotencyKeyOf([key]);
        } catch {
          accepted = false;
        }
        if (!accepted) expect(documentKey(key)).toBe(false);
      }),
    );
  });

  it('bound the amount the same: the maximum and decimals of the document are where the server stops', () => {
    const amount = at(['components', 'schemas', 'SendRequest', 'properties', 'amount']) as unknown as {
      maximum: number;
      'x-decimals': number;
      'x-max-text-length': number;
    };
    const currency = { code: defaultServiceSettings.currency, decimals: amount['x-decimals'] };
    const max = defaultServiceSettings.maxTransferMinor;
    expect(amount.maximum).toBe(max / 10 ** currency.decimals);
    expect(parseAmount(String(amount.maximum), currency, max)).toEqual({ minor: max });
    expect(parseAmount(formatMinor(max + 1, currency), currency, max)).toEqual({ problem: 'too-large' });
    expect(parseAmount(`1.${'0'.repeat(currency.decimals - 1)}1`, currency, max)).toEqual({
      minor: 10 ** currency.decimals + 1,
    });
    expect(parseAmount(`1.${'0'.repeat(currency.decimals)}1`, currency, max)).toEqual({
      problem: 'too-precise',
    });
    expect(parseAmount('1'.padEnd(amount['x-max-text-length'] + 1, '0'), currency, max)).toEqual({
      problem: 'too-long',
    });
  });

  it('promise the pet id in answers: StoredPet requires it, Pet (the request) does not', () => {
    expect(at<string[]>(['components', 'schemas', 'StoredPet', 'required'])).toContain('id');
    expect(at<string[]>(['components', 'schemas', 'Pet', 'required'])).not.toContain('id');
  });
});

describe('the generated validators', () => {
  it('are plain ESM that loads no ajv runtime module (its length counter is inlined), importing only the address profile', () => {
    const code = readFileSync(
      new URL('../../shared/schemas/validators.generated.js', import.meta.url),
      'utf8',
    );
    expect(code).not.toMatch(/\brequire\(/);
    expect(code.match(/^import .*$/gm)).toEqual([
      'import { isProfiledIdentifier } from "./identifier-profile.ts";',
    ]);
    expect(code).toContain('function ucs2length');
  });
});
