// An integer schema whose wrong-type issue says "integer" even when the value is not a number at all
// (zod reports a string given to z.int() as "expected number"), so messages name the exact type.
import * as z from 'zod';

/** The message zod carries on a wrong-type issue of an `integer()` schema; config-file.ts keys on it. */
export const INTEGER_EXPECTED = 'expected an integer';

export function integer(): z.ZodInt {
  return z.int({ error: (issue) => (issue.code === 'invalid_type' ? INTEGER_EXPECTED : undefined) });
}
