// Loading a helper that native/build.cjs may have built (node-gyp, when a C compiler is there). Every
// helper is optional: a caller gets the module, or the reason it is missing to tell the user.
import { createRequire } from 'node:module';

/** From dist/src/util/ (where this runs) to node-gyp's output. */
const BUILT = '../../../native/build/Release/';

/** The helper `<name>.node` (its exports, for the caller to type), or why it cannot be loaded (a sentence naming the helper). */
export function loadNativeHelper(name: string, what: string): object | string {
  try {
    // Node caches a loaded helper: calling this again returns the same module.
    return createRequire(import.meta.url)(`${BUILT}${name}.node`) as object;
  } catch (e) {
    return `${what} helper not built (${(e as NodeJS.ErrnoException).code ?? 'load failed'}): run \`npm run build\` with a C compiler`;
  }
}
