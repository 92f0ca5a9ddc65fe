// Payload fills for the PayloadPool (src/data/fillers.ts NativeFiller): the same bytes as
// src/data/payload.ts's fillChunk / stampChunk (test/data/fillers.test.ts holds them equal). Why: the
// worker threads cost two messages and two thread wake-ups per 4 MiB chunk, a third of the main
// thread's CPU in a fast write run. `stamp` rewrites a slot's stamps at once on the calling thread;
// `fill` (a full copy, or stamps) is a job on libuv's threadpool.
//
// fill(slot, source, stampWords, material, entryOffset, sourceFrom, copy, callback):
//   slot        Uint8Array to fill (a payload slot);
//   source      Uint8Array, the run's random source (SOURCE_BYTES);
//   stampWords  Uint8Array, the source's first 16 bytes of every 512-byte block, packed;
//   material    Uint8Array, the entry's key material (at least 16 bytes: the stamp's key part);
//   entryOffset the chunk's offset in its entry, a multiple of 512;
//   sourceFrom  where the chunk copies the source from, a multiple of 512, sourceFrom + slot length
//               within the source;
//   copy        true: copy the source bytes first; false: the slot holds them already (stamps only);
//   callback    called on the main thread with no argument when done, or with an error message.
// The caller keeps every buffer alive and untouched until the callback (the pool does: the slot is
// held by the fill, the source and stamp words for the pool's life); references here make sure.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <node_api.h>

#define BLOCK 512
#define STAMP 16
/** How many blocks ahead the stamp loop prefetches the slot's line (tuned on an EPYC VM: bench:datagen). */
#define PREFETCH_BLOCKS 16

typedef struct {
  uint8_t *slot;
  size_t length;
  const uint8_t *source;
  const uint8_t *stamp_words;
  uint8_t key[STAMP];
  uint64_t first_block;
  size_t source_from;
  int copy;
  napi_ref refs[4];
  napi_ref callback;
  napi_async_work work;
} fill_job;

/** Byte j (0–15) of block `index`'s stamp: key[j] XOR (0^8 ‖ le64(index))[j]. */
static uint8_t stamp_byte(const uint8_t *key, uint64_t index, size_t j) {
  return (uint8_t)(key[j] ^ (j < 8 ? 0 : (uint8_t)(index >> (8 * (j - 8)))));
}

/** Runs on a threadpool thread: no N-API calls here. */
static void execute(napi_env env, void *data) {
  (void)env;
  fill_job *job = data;
  const uint8_t *src = job->source + job->source_from;
  if (job->copy) memcpy(job->slot, src, job->length);
  uint64_t k0, k1;
  memcpy(&k0, job->key, 8);
  memcpy(&k1, job->key + 8, 8);
  size_t whole = job->length / BLOCK;
  const uint8_t *packed = job->stamp_words + (job->source_from / BLOCK) * STAMP;
  for (size_t b = 0; b < whole; b++) {
    // The slot is rarely in cache (the device read it last): ask for the line of a block well ahead.
    if (b + PREFETCH_BLOCKS < whole) __builtin_prefetch(job->slot + (b + PREFETCH_BLOCKS) * BLOCK, 1, 0);
    uint64_t s0, s1;
    memcpy(&s0, packed + b * STAMP, 8);
    memcpy(&s1, packed + b * STAMP + 8, 8);
    // Little-endian words, as the stamp is defined (the build is x86-64 or arm64 Linux).
    s0 ^= k0;
    s1 ^= k1 ^ (job->first_block + b);
    memcpy(job->slot + b * BLOCK, &s0, 8);
    memcpy(job->slot + b * BLOCK + 8, &s1, 8);
  }
  size_t tail = job->length - whole * BLOCK;
  size_t n = tail < STAMP ? tail : STAMP;
  for (size_t j = 0; j < n; j++) job->slot[whole * BLOCK + j] = src[whole * BLOCK + j] ^ stamp_byte(job->key, job->first_block + whole, j);
}

static void complete(napi_env env, napi_status status, void *data) {
  fill_job *job = data;
  napi_value callback, global, arg;
  napi_get_reference_value(env, job->callback, &callback);
  napi_get_global(env, &global);
  size_t argc = 0;
  if (status != napi_ok) {
    napi_create_string_utf8(env, "the fill was cancelled", NAPI_AUTO_LENGTH, &arg);
    argc = 1;
  }
  for (int i = 0; i < 4; i++) napi_delete_reference(env, job->refs[i]);
  napi_delete_reference(env, job->callback);
  napi_delete_async_work(env, job->work);
  free(job);
  napi_call_function(env, global, callback, argc, argc ? &arg : NULL, NULL);
}

/** The data and length of a Uint8Array argument; 0 after throwing. */
static int bytes_of(napi_env env, napi_value value, const char *name, uint8_t **data, size_t *length) {
  bool is_typed = false;
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset;
  void *raw;
  if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed ||
      napi_get_typedarray_info(env, value, &type, length, &raw, &buffer, &offset) != napi_ok || type != napi_uint8_array) {
    char message[80];
    snprintf(message, sizeof message, "%s must be a Uint8Array", name);
    napi_throw_type_error(env, NULL, message);
    return 0;
  }
  *data = raw;
  return 1;
}

static int whole_number(napi_env env, napi_value value, const char *name, int64_t *out) {
  double d;
  if (napi_get_value_double(env, value, &d) != napi_ok || d < 0 || d > 9007199254740991.0 || d != (double)(int64_t)d) {
    char message[80];
    snprintf(message, sizeof message, "%s must be a non-negative integer", name);
    napi_throw_range_error(env, NULL, message);
    return 0;
  }
  *out = (int64_t)d;
  return 1;
}

/** Reads the chunk arguments argv[0..5] (and `copy` from argv[6] when `with_copy`) into `job`; 0 after throwing. */
static int parse_job(napi_env env, napi_value *argv, int with_copy, fill_job *job) {
  uint8_t *slot, *source, *words, *material;
  size_t slot_len, source_len, words_len, material_len;
  int64_t entry_offset, source_from;
  bool copy = false;
  if (!bytes_of(env, argv[0], "slot", &slot, &slot_len) || !bytes_of(env, argv[1], "source", &source, &source_len) ||
      !bytes_of(env, argv[2], "stampWords", &words, &words_len) || !bytes_of(env, argv[3], "material", &material, &material_len) ||
      !whole_number(env, argv[4], "entryOffset", &entry_offset) || !whole_number(env, argv[5], "sourceFrom", &source_from))
    return 0;
  if (with_copy && napi_get_value_bool(env, argv[6], &copy) != napi_ok) {
    napi_throw_type_error(env, NULL, "copy must be a boolean");
    return 0;
  }
  if (material_len < STAMP || entry_offset % BLOCK != 0 || source_from % BLOCK != 0 || (size_t)source_from + slot_len > source_len ||
      words_len != source_len / BLOCK * STAMP) {
    napi_throw_range_error(env, NULL, "fill: the chunk does not fit the source, or is not on a 512-byte block");
    return 0;
  }
  job->slot = slot;
  job->length = slot_len;
  job->source = source;
  job->stamp_words = words;
  memcpy(job->key, material, STAMP);
  job->first_block = (uint64_t)entry_offset / BLOCK;
  job->source_from = (size_t)source_from;
  job->copy = copy;
  return 1;
}

/** fill(slot, source, stampWords, material, entryOffset, sourceFrom, copy, callback): queued on the threadpool. */
static napi_value fill(napi_env env, napi_callback_info info) {
  size_t argc = 8;
  napi_value argv[8];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  napi_valuetype cb_type = napi_undefined;
  if (argc < 8 || napi_typeof(env, argv[7], &cb_type) != napi_ok || cb_type != napi_function) {
    napi_throw_type_error(env, NULL, "fill takes 8 arguments, the last a callback");
    return NULL;
  }
  fill_job *job = calloc(1, sizeof *job);
  if (job == NULL) {
    napi_throw_error(env, NULL, "fill: out of memory");
    return NULL;
  }
  if (!parse_job(env, argv, 1, job)) {
    free(job);
    return NULL;
  }
  for (int i = 0; i < 4; i++) napi_create_reference(env, argv[i], 1, &job->refs[i]);
  napi_create_reference(env, argv[7], 1, &job->callback);
  napi_value name;
  napi_create_string_utf8(env, "kv-cache payload fill", NAPI_AUTO_LENGTH, &name);
  if (napi_create_async_work(env, NULL, name, execute, complete, job, &job->work) != napi_ok || napi_queue_async_work(env, job->work) != napi_ok) {
    for (int i = 0; i < 4; i++) napi_delete_reference(env, job->refs[i]);
    napi_delete_reference(env, job->callback);
    free(job);
    napi_throw_error(env, NULL, "fill: could not queue the job");
  }
  return NULL;
}

/**
 * stamp(slot, source, stampWords, material, entryOffset, sourceFrom): the stamps alone, now, on the
 * calling thread (a slot that holds the source bytes already). About 0.05 ms per 4 MiB: less than
 * handing the job to a sleeping thread costs the caller in a virtual machine (~0.1 ms per wake-up).
 */
static napi_value stamp(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 6) {
    napi_throw_type_error(env, NULL, "stamp takes 6 arguments");
    return NULL;
  }
  fill_job job;
  memset(&job, 0, sizeof job);
  if (parse_job(env, argv, 0, &job)) execute(env, &job);
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"fill", NULL, fill, NULL, NULL, NULL, napi_enumerable, NULL},
      {"stamp", NULL, stamp, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
