/**
 * A form body (`application/x-www-form-urlencoded`), for the one operation that takes its fields
 * either in the query or as a form: Petstore's `updatePetWithForm`, whose Swagger 2.0 contract
 * sent `name` and `status` as `formData`, and HTML forms do still.
 */
import {
  InvalidParameterError,
  MalformedBodyError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
} from '../errors.ts';

export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/**
 * The longest form taken, in bytes: room for the longest name (200 code points of 4 UTF-8 bytes,
 * each byte `%XX`: 2,400) and a status, twice over. Bounded before a byte is decoded.
 */
export const FORM_MAX_BYTES = 4096;

/** A form's fields, each given once; no prototype, so `constructor` is only ever a field sent. */
export type FormFields = Readonly<Record<string, string | undefined>>;

/**
 * The fields of a form body, refusing what a client would otherwise see silently ignored: a body of
 * another media type or charset (415), more than {@link FORM_MAX_BYTES} (413), a malformed percent
 * escape or one that is not UTF-8 (400, `malformed-body`), a field not among `fields` or given
 * twice (400, naming it). No body, or an empty one, is no field.
 */
export function parseForm(
  body: string | null,
  contentType: string | undefined,
  fields: readonly string[],
): FormFields {
  const form: Record<string, string> = Object.create(null);
  if (body === null || body === '') return form;
  if (!isUtf8Form(contentType)) {
    throw new UnsupportedMediaTypeError(
      `Send ${fields.join(' and ')} in the query, or as a form: Content-Type ${FORM_MEDIA_TYPE} (UTF-8)`,
    );
  }
  if (Buffer.byteLength(body) > FORM_MAX_BYTES) {
    throw new PayloadTooLargeError(`The form may be at most ${FORM_MAX_BYTES} bytes`);
  }
  for (const pair of body.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = decode(equals === -1 ? pair : pair.slice(0, equals));
    const value = equals === -1 ? '' : decode(pair.slice(equals + 1));
    if (!fields.includes(name)) {
      throw new InvalidParameterError(
        `The form may give ${fields.join(' and ')} only; it gives ${quoted(name)}`,
      );
    }
    if (Object.hasOwn(form, name))
      throw new InvalidParameterError(`${name} may be given once; the form repeats it`);
    form[name] = value;
  }
  return form;
}

/**
 * A field given in the query or in the form, not both: which would win is a guess a client should
 * not have to make.
 */
export function queryOrForm(name: string, query: string | undefined, form: FormFields): string | undefined {
  const fromForm = form[name];
  if (query !== undefined && fromForm !== undefined) {
    throw new InvalidParameterError(`${name} is given both in the query and in the form; give it once`);
  }
  return query ?? fromForm;
}

/** `+` is a space (the HTML rule); every `%XX` must be valid and the bytes UTF-8, as `decodeURIComponent` demands. */
function decode(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    throw new MalformedBodyError('The form has a malformed percent-escape, or one whose bytes are not UTF-8');
  }
}

/** A field name as the error quotes it: short, and without what could forge a log line. */
function quoted(name: string): string {
  return JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name);
}

/** The form's media type, with no charset or UTF-8's (case-insensitive, quoted or not). */
function isUtf8Form(contentType: string | undefined): boolean {
  const [mediaType, ...parameters] = (contentType ?? '').split(';');
  if (mediaType?.trim().toLowerCase() !== FORM_MEDIA_TYPE) return false;
  return parameters.every((parameter) => {
    const [key, value = ''] = parameter.split('=');
    if (key?.trim().toLowerCase() !== 'charset') return true;
    return (
      value
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase() === 'utf-8'
    );
  });
}
