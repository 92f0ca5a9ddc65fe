// Computations that are synchronous unless they have to wait. A step function is a generator that
// yields each promise it must wait for and receives its value (or its rejection, thrown at the yield)
// back; drive() runs it on the caller's stack until its first real wait and only then goes
// asynchronous. The cache and the request pipeline are written this way because in trace mode
// (null tiers) nothing ever waits, and an async function per cache operation cost a promise, a
// microtask turn and garbage per operation: the simulation rate was bounded by that machinery.

/** A computation yielding the promises it waits for, returning T. */
export type Steps<T> = Generator<PromiseLike<unknown>, T, unknown>;

/** T now, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Runs `steps` synchronously until it finishes (its value is returned, its exception thrown) or yields
 * a promise (a Promise of the final value is returned and the rest runs as that promise settles).
 */
export function drive<T>(steps: Steps<T>): MaybePromise<T> {
  const first = steps.next();
  return first.done === true ? first.value : resume(steps, first.value);
}

async function resume<T>(steps: Steps<T>, waitingFor: PromiseLike<unknown>): Promise<T> {
  let pending = waitingFor;
  for (;;) {
    let r: IteratorResult<PromiseLike<unknown>, T>;
    try {
      r = steps.next(await pending);
    } catch (e) {
      // Either the awaited promise rejected (hand the error to the generator at its yield) or the
      // generator itself threw while resuming (then it is finished and throw() rethrows the error).
      r = steps.throw(e);
    }
    if (r.done === true) return r.value;
    pending = r.value;
  }
}

/**
 * Settles `steps` into a promise: drive() for callers that want a promise whatever happens (a
 * synchronous throw becomes a rejection).
 */
export function settle<T>(steps: Steps<T>): Promise<T> {
  try {
    const out = drive(steps);
    return out instanceof Promise ? out : Promise.resolve(out);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** Inside a step function: `yield* wait(x)` is x's value, waiting only if x is a promise. */
export function* wait<T>(x: MaybePromise<T>): Steps<T> {
  if (x instanceof Promise) return (yield x) as T;
  return x;
}
