// One small file's whole life as one job on a thread of this helper's own pool (issue 34 item 7): open,
// the data call(s), ftruncate, fsync, close and a rename, in C on one thread. Through Node's fs each of
// those is its own libuv threadpool round trip (wake a worker, wake the event loop: 8–16 µs of CPU
// each in a VM), so with one file per 16 KiB KV block the hand-offs, not the file system, set the rate
// (docs/performance.md#block-operations-per-cpu-second). Each system call is timed here with
// CLOCK_MONOTONIC, on the thread that makes it, so the caller can split host from device time exactly.
//
// Why a pool of its own rather than libuv's: its threads run SCHED_BATCH, so a thread woken for a job
// does not preempt the event loop on its CPU (on a 2-vCPU VM the loop, which submits every job, lost
// a fifth of its time that way); a job costs no allocation of N-API work or references; and finished
// jobs reach JavaScript through one thread-safe function, many per wake-up of the loop.
//
// open(threads, onDone) → pool: `threads` threads; onDone(id, errno) on the main thread per finished
//   job (errno 0, or that of the call that failed, after everything opened was closed).
// submit(pool, id, path, flags, mode, steps, buffer, length, position, truncateTo, renameTo, out, fd):
//   id         the caller's number for the job, handed back to onDone;
//   path       the file to open (a string), unless `fd` ≥ 0: a descriptor of the caller's, used as it
//              is (no open, no close, no rename; the caller keeps it open until onDone);
//   flags      open(2) flags; mode its mode for O_CREAT;
//   steps      a bit set: 1 write `length` bytes of `buffer` at `position` (continuing short writes),
//              2 read up to `length` bytes into `buffer` at `position` (continuing short reads until
//              EOF), 4 ftruncate to `truncateTo`, 8 fsync, 16 rename onto `renameTo` after the close,
//              32 fstat first and fail with ENOENT unless a regular file of `truncateTo` bytes,
//              256 fdatasync (instead of 8);
//   buffer     Uint8Array; out Float64Array(8): the caller keeps both alive and untouched until onDone;
//   out        written before onDone: [bytes moved, open ns, data ns, ftruncate ns, (data)sync ns, close ns,
//              rename ns, step that failed (0 none, else its bit; 64 the open, 128 the close)].
// close(pool): no more jobs; the threads finish what is queued (reported to onDone), then end. Teardown
//   of the environment with the pool open waits for its threads (they write into JavaScript's buffers).
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <node_api.h>

enum { STEP_WRITE = 1, STEP_READ = 2, STEP_TRUNCATE = 4, STEP_SYNC = 8, STEP_RENAME = 16, STEP_CHECK = 32, STEP_OPEN = 64, STEP_CLOSE = 128, STEP_DATASYNC = 256 };
enum { OUT_BYTES, OUT_OPEN, OUT_DATA, OUT_TRUNCATE, OUT_SYNC, OUT_CLOSE, OUT_RENAME, OUT_FAILED, OUT_LENGTH };

typedef struct file_job {
  struct file_job *next;
  int32_t id;
  /** An open descriptor of the caller's to use (no open, no close), or -1: open `path`. */
  int fd;
  char *path;
  char *rename_to;
  int flags;
  int mode;
  int steps;
  uint8_t *data;
  size_t length;
  int64_t position;
  int64_t truncate_to;
  double *out;
  int error;
} file_job;

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  /** Signalled when the last thread ends (the environment's teardown waits for it). */
  pthread_cond_t exited;
  file_job *head, *tail;
  /** Threads waiting for a job; threads still running (the last one out releases `done`). */
  int idle, running;
  int closing;
  /** Jobs submitted and not yet handed to onDone (main thread only): `done` keeps the loop alive while > 0. */
  int64_t in_flight;
  napi_threadsafe_function done;
  /** Set (under the lock) once the last thread has released `done`: the teardown hook waits for it. */
  int ended;
  /**
   * Two owners free the pool, whichever is last: the threads (the last one, once it has released
   * `done` and said so) and `done`'s finalizer on the main thread, which can run before that thread
   * has let go of the lock.
   */
  atomic_int owners;
} job_pool;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/** Records a failed step: its errno and which step it was. */
static void fail(file_job *job, int step) {
  if (job->error != 0) return;
  job->error = errno != 0 ? errno : EIO;
  job->out[OUT_FAILED] = step;
}

/** write(2)s the whole buffer, continuing short writes; 0 on success. */
static int write_all(file_job *job, int fd) {
  size_t done = 0;
  while (done < job->length) {
    ssize_t n = pwrite(fd, job->data + done, job->length - done, job->position + (int64_t)done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return -1;
    }
    done += (size_t)n;
  }
  job->out[OUT_BYTES] = (double)done;
  return 0;
}

/** read(2)s until `length` bytes or the end of the file; 0 on success (a short file is the caller's to judge). */
static int read_all(file_job *job, int fd) {
  size_t done = 0;
  while (done < job->length) {
    ssize_t n = pread(fd, job->data + done, job->length - done, job->position + (int64_t)done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    done += (size_t)n;
  }
  job->out[OUT_BYTES] = (double)done;
  return 0;
}

/** Runs on a pool thread: system calls only, no N-API. */
static void execute(file_job *job) {
  double *out = job->out;
  errno = 0;
  int64_t t = now_ns();
  int fd = job->fd >= 0 ? job->fd : open(job->path, job->flags, job->mode);
  int64_t t1 = now_ns();
  out[OUT_OPEN] = (double)(t1 - t);
  if (fd < 0) {
    fail(job, STEP_OPEN);
    return;
  }
  t = t1;
  if (job->steps & STEP_CHECK) {
    struct stat st;
    if (fstat(fd, &st) != 0) fail(job, STEP_CHECK);
    else if (!S_ISREG(st.st_mode) || st.st_size != job->truncate_to) {
      errno = ENOENT;
      fail(job, STEP_CHECK);
    }
    t1 = now_ns();
    out[OUT_OPEN] += (double)(t1 - t); // the check is part of opening the block: host time
    t = t1;
  }
  if (job->error == 0 && (job->steps & (STEP_WRITE | STEP_READ))) {
    if (((job->steps & STEP_WRITE) ? write_all(job, fd) : read_all(job, fd)) != 0) fail(job, job->steps & (STEP_WRITE | STEP_READ));
    t1 = now_ns();
    out[OUT_DATA] = (double)(t1 - t);
    t = t1;
  }
  if (job->error == 0 && (job->steps & STEP_TRUNCATE)) {
    if (ftruncate(fd, job->truncate_to) != 0) fail(job, STEP_TRUNCATE);
    t1 = now_ns();
    out[OUT_TRUNCATE] = (double)(t1 - t);
    t = t1;
  }
  if (job->error == 0 && (job->steps & (STEP_SYNC | STEP_DATASYNC))) {
    if (((job->steps & STEP_SYNC) ? fsync(fd) : fdatasync(fd)) != 0) fail(job, job->steps & STEP_SYNC ? STEP_SYNC : STEP_DATASYNC);
    t1 = now_ns();
    out[OUT_SYNC] = (double)(t1 - t);
    t = t1;
  }
  if (job->fd >= 0) return; // the caller's descriptor stays open (and has no rename)
  if (close(fd) != 0 && errno != EINTR) fail(job, STEP_CLOSE); // Linux closes the descriptor even then: never retried
  t1 = now_ns();
  out[OUT_CLOSE] = (double)(t1 - t);
  t = t1;
  if (job->error == 0 && (job->steps & STEP_RENAME)) {
    if (rename(job->path, job->rename_to) != 0) fail(job, STEP_RENAME);
    out[OUT_RENAME] = (double)(now_ns() - t);
  }
}

static void free_job(file_job *job) {
  free(job->path);
  free(job->rename_to);
  free(job);
}

static void free_pool(job_pool *pool) {
  pthread_mutex_destroy(&pool->lock);
  pthread_cond_destroy(&pool->wake);
  pthread_cond_destroy(&pool->exited);
  free(pool);
}

/** One owner lets go of the pool; the last frees it. */
static void drop_owner(job_pool *pool) {
  if (atomic_fetch_sub(&pool->owners, 1) == 1) free_pool(pool);
}

/** A pool thread: jobs until the pool closes and its queue is empty; the last thread out releases `done`. */
static void *work(void *data) {
  job_pool *pool = data;
  struct sched_param none = {0};
  pthread_setschedparam(pthread_self(), SCHED_BATCH, &none); // no wake-up preemption of the event loop
  pthread_setname_np(pthread_self(), "kv-block-io");
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    while (pool->head == NULL && !pool->closing) {
      pool->idle++;
      pthread_cond_wait(&pool->wake, &pool->lock);
      pool->idle--;
    }
    file_job *job = pool->head;
    if (job == NULL) break; // closing, nothing queued
    pool->head = job->next;
    if (pool->head == NULL) pool->tail = NULL;
    pthread_mutex_unlock(&pool->lock);
    execute(job);
    napi_call_threadsafe_function(pool->done, job, napi_tsfn_nonblocking);
    pthread_mutex_lock(&pool->lock);
  }
  int last = --pool->running == 0;
  pthread_mutex_unlock(&pool->lock);
  if (!last) return NULL;
  // Released before the teardown hook is told: once the hook returns, Node may delete `done`.
  napi_release_threadsafe_function(pool->done, napi_tsfn_release);
  pthread_mutex_lock(&pool->lock);
  pool->ended = 1;
  pthread_cond_broadcast(&pool->exited);
  pthread_mutex_unlock(&pool->lock);
  drop_owner(pool);
  return NULL;
}

/** On the main thread: one finished job to onDone(id, errno); without an env (teardown) only freed. */
static void call_done(napi_env env, napi_value on_done, void *context, void *data) {
  job_pool *pool = context;
  file_job *job = data;
  if (env != NULL) {
    if (--pool->in_flight == 0) napi_unref_threadsafe_function(env, pool->done);
    napi_value undefined, argv[2];
    napi_get_undefined(env, &undefined);
    napi_create_int32(env, job->id, &argv[0]);
    napi_create_int32(env, job->error, &argv[1]);
    napi_call_function(env, undefined, on_done, 2, argv, NULL);
  }
  free_job(job);
}

/** Stops taking jobs; the threads drain the queue and end. */
static void close_pool(job_pool *pool) {
  pthread_mutex_lock(&pool->lock);
  pool->closing = 1;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
}

/**
 * The environment is going away (process.exit, the end of a worker) with the pool open: its threads
 * must not go on writing into buffers that are about to be freed, so this waits for them to end.
 */
static void cleanup_hook(void *data) {
  job_pool *pool = data;
  close_pool(pool);
  pthread_mutex_lock(&pool->lock);
  while (!pool->ended) pthread_cond_wait(&pool->exited, &pool->lock);
  pthread_mutex_unlock(&pool->lock);
}

static void finalize_pool(napi_env env, void *data, void *hint) {
  (void)hint;
  job_pool *pool = data;
  if (env != NULL) napi_remove_env_cleanup_hook(env, cleanup_hook, pool);
  drop_owner(pool);
}


/** A string argument as a fresh C string; NULL after throwing. */
static char *string_of(napi_env env, napi_value value, const char *name) {
  size_t length;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) {
    char message[80];
    snprintf(message, sizeof message, "%s must be a string", name);
    napi_throw_type_error(env, NULL, message);
    return NULL;
  }
  char *s = malloc(length + 1);
  if (s == NULL) {
    napi_throw_error(env, NULL, "block-io: out of memory");
    return NULL;
  }
  napi_get_value_string_utf8(env, value, s, length + 1, &length);
  if (strlen(s) != length) { // a NUL inside would open another file than the one named
    free(s);
    napi_throw_type_error(env, NULL, "a path must not contain NUL");
    return NULL;
  }
  return s;
}

/** A whole number argument (within ±2^53); 0 after throwing. */
static int number_of(napi_env env, napi_value value, const char *name, int64_t *result) {
  double d;
  if (napi_get_value_double(env, value, &d) != napi_ok || d < -9007199254740991.0 || d > 9007199254740991.0 || d != (double)(int64_t)d) {
    char message[80];
    snprintf(message, sizeof message, "%s must be an integer", name);
    napi_throw_range_error(env, NULL, message);
    return 0;
  }
  *result = (int64_t)d;
  return 1;
}

/** A typed array argument of `type`: its data and length in elements; 0 after throwing. */
static int array_of(napi_env env, napi_value value, napi_typedarray_type type, const char *name, void **data, size_t *length) {
  bool is_typed = false;
  napi_typedarray_type got;
  napi_value buffer;
  size_t offset;
  if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed ||
      napi_get_typedarray_info(env, value, &got, length, data, &buffer, &offset) != napi_ok || got != type) {
    char message[80];
    snprintf(message, sizeof message, "%s has the wrong type", name);
    napi_throw_type_error(env, NULL, message);
    return 0;
  }
  return 1;
}

/** The pool behind a handle from open(); NULL after throwing (not a pool, or closed). */
static job_pool *pool_of(napi_env env, napi_value value) {
  void *data = NULL;
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_external || napi_get_value_external(env, value, &data) != napi_ok || data == NULL) {
    napi_throw_type_error(env, NULL, "not a block-file pool");
    return NULL;
  }
  job_pool *pool = data;
  if (pool->closing) {
    napi_throw_error(env, NULL, "the block-file pool is closed");
    return NULL;
  }
  return pool;
}

/** Reads submit's arguments argv[1..12] into `job`; 0 after throwing. */
static int parse(napi_env env, napi_value *argv, file_job *job) {
  int64_t id, flags, mode, steps, length, position, truncate_to, fd;
  void *data, *out;
  size_t data_length, out_length;
  if (!number_of(env, argv[1], "id", &id) || !number_of(env, argv[3], "flags", &flags) || !number_of(env, argv[4], "mode", &mode) ||
      !number_of(env, argv[5], "steps", &steps) || !array_of(env, argv[6], napi_uint8_array, "buffer", &data, &data_length) ||
      !number_of(env, argv[7], "length", &length) || !number_of(env, argv[8], "position", &position) ||
      !number_of(env, argv[9], "truncateTo", &truncate_to) || !array_of(env, argv[11], napi_float64_array, "out", &out, &out_length) ||
      !number_of(env, argv[12], "fd", &fd))
    return 0;
  int open_or_close_steps = STEP_OPEN | STEP_CLOSE;
  if (id < 0 || id > INT32_MAX || length < 0 || (size_t)length > data_length || position < 0 || out_length < OUT_LENGTH || steps < 0 ||
      steps >= 512 || (steps & open_or_close_steps) || ((steps & STEP_WRITE) && (steps & STEP_READ)) || fd < -1 || fd > INT32_MAX ||
      (fd >= 0 && (steps & STEP_RENAME))) {
    napi_throw_range_error(env, NULL, "submit: an id or fd out of range, length beyond the buffer, a negative position, or steps out of range");
    return 0;
  }
  job->fd = (int)fd;
  job->id = (int32_t)id;
  job->flags = (int)flags;
  job->mode = (int)mode;
  job->steps = (int)steps;
  job->data = data;
  job->length = (size_t)length;
  job->position = position;
  job->truncate_to = truncate_to;
  job->out = out;
  memset(job->out, 0, OUT_LENGTH * sizeof(double));
  job->path = string_of(env, argv[2], "path");
  if (job->path == NULL) return 0;
  if (steps & STEP_RENAME) {
    job->rename_to = string_of(env, argv[10], "renameTo");
    if (job->rename_to == NULL) return 0;
  }
  return 1;
}

/** submit(pool, id, path, flags, mode, steps, buffer, length, position, truncateTo, renameTo, out, fd). */
static napi_value submit(napi_env env, napi_callback_info info) {
  size_t argc = 13;
  napi_value argv[13];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 13) {
    napi_throw_type_error(env, NULL, "submit takes 13 arguments");
    return NULL;
  }
  job_pool *pool = pool_of(env, argv[0]);
  if (pool == NULL) return NULL;
  file_job *job = calloc(1, sizeof *job);
  if (job == NULL) {
    napi_throw_error(env, NULL, "block-io: out of memory");
    return NULL;
  }
  if (!parse(env, argv, job)) {
    free_job(job);
    return NULL;
  }
  if (pool->in_flight++ == 0) napi_ref_threadsafe_function(env, pool->done); // the loop waits for the jobs
  pthread_mutex_lock(&pool->lock);
  if (pool->tail == NULL) pool->head = job;
  else pool->tail->next = job;
  pool->tail = job;
  if (pool->idle > 0) pthread_cond_signal(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

/** open(threads, onDone) → a pool handle. */
static napi_value open_pool(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int64_t threads;
  napi_valuetype cb_type = napi_undefined;
  if (argc < 2 || !number_of(env, argv[0], "threads", &threads) || napi_typeof(env, argv[1], &cb_type) != napi_ok || cb_type != napi_function) {
    if (argc < 2 || cb_type != napi_function) napi_throw_type_error(env, NULL, "open takes a thread count and a callback");
    return NULL;
  }
  if (threads < 1 || threads > 1024) {
    napi_throw_range_error(env, NULL, "open: threads must be 1 to 1024");
    return NULL;
  }
  job_pool *pool = calloc(1, sizeof *pool);
  if (pool == NULL) {
    napi_throw_error(env, NULL, "block-io: out of memory");
    return NULL;
  }
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->exited, NULL);
  atomic_init(&pool->owners, 2);
  napi_value name, handle;
  napi_create_string_utf8(env, "kv-cache block files", NAPI_AUTO_LENGTH, &name);
  if (napi_create_threadsafe_function(env, argv[1], NULL, name, 0, 1, pool, finalize_pool, pool, call_done, &pool->done) != napi_ok) {
    free_pool(pool);
    napi_throw_error(env, NULL, "open: could not make the completion function");
    return NULL;
  }
  napi_unref_threadsafe_function(env, pool->done); // idle, the pool keeps nothing alive
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_mutex_lock(&pool->lock);
  for (int64_t i = 0; i < threads; i++) {
    pthread_t thread;
    if (pthread_create(&thread, &attr, work, pool) != 0) break;
    pool->running++;
  }
  int started = pool->running;
  pthread_mutex_unlock(&pool->lock);
  pthread_attr_destroy(&attr);
  if (started == 0) {
    atomic_store(&pool->owners, 1); // no thread to let go of it
    napi_release_threadsafe_function(pool->done, napi_tsfn_release); // finalize_pool frees it
    napi_throw_error(env, NULL, "open: could not start a thread");
    return NULL;
  }
  napi_add_env_cleanup_hook(env, cleanup_hook, pool);
  // The pool outlives its handle until its threads end (the last one releases `done`, whose finalizer frees it).
  napi_create_external(env, pool, NULL, NULL, &handle);
  return handle;
}

/** close(pool): no more jobs; the queued ones still run and are reported. */
static napi_value close_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  job_pool *pool = argc < 1 ? NULL : pool_of(env, argv[0]);
  if (pool == NULL) return NULL;
  close_pool(pool); // the cleanup hook stays until the threads have ended: finalize_pool removes it
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  const char *names[] = {"open", "submit", "close"};
  napi_callback calls[] = {open_pool, submit, close_js};
  for (int i = 0; i < 3; i++) {
    napi_value fn;
    napi_create_function(env, names[i], NAPI_AUTO_LENGTH, calls[i], NULL, &fn);
    napi_set_named_property(env, exports, names[i], fn);
  }
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
