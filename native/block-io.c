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
// open(threads, onDone, engine) → pool. engine 0: `threads` threads, each making a job's calls one
//   after another. engine 1: one thread driving an io_uring (below), at most `threads` of its calls
//   in the kernel's workers at once; throws an Error whose message says why when the kernel refuses
//   io_uring (disabled, a seccomp filter, too old). onDone(id, errno) on the main thread per finished
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
//              256 fdatasync (instead of 8); 512 unlink `path`, 1024 mkdir `path` with `mode`, 2048
//              link `path` to `renameTo`, 4096 lstat `path` (each alone: nothing opened, no other step);
//   buffer     Uint8Array; out (below): the caller keeps both alive and untouched until onDone;
//   out        Float64Array(10), written before onDone: [bytes moved, open ns, data ns, ftruncate ns,
//              (data)sync ns, close ns, rename ns, step that failed (0 none, else its bit; 64 the open, 128
//              the close), and for an lstat the mtime (ms) and the file type (S_IFMT bits)]; an unlink's,
//              a mkdir's, a link's or an lstat's time is in the open's place, an lstat's size in the bytes'.
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
#include <linux/io_uring.h>
#include <sys/eventfd.h>
#include <math.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <node_api.h>

enum { STEP_WRITE = 1, STEP_READ = 2, STEP_TRUNCATE = 4, STEP_SYNC = 8, STEP_RENAME = 16, STEP_CHECK = 32, STEP_OPEN = 64, STEP_CLOSE = 128, STEP_DATASYNC = 256, STEP_UNLINK = 512, STEP_MKDIR = 1024, STEP_LINK = 2048, STEP_LSTAT = 4096, STEPS_END = 8192 };
/** Steps that are a job alone (a path, no descriptor). */
enum { STEPS_ALONE = STEP_UNLINK | STEP_MKDIR | STEP_LINK | STEP_LSTAT };
enum { OUT_BYTES, OUT_OPEN, OUT_DATA, OUT_TRUNCATE, OUT_SYNC, OUT_CLOSE, OUT_RENAME, OUT_FAILED, OUT_MTIME, OUT_KIND, OUT_LENGTH };

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
  /** io_uring engine: the step in the kernel now, when it was handed over, bytes moved so far, fstat's answer. */
  int stage;
  /** The descriptor its open gave (-1: none, or closed). */
  int opened;
  int64_t started;
  size_t moved;
  struct statx st;
} file_job;

typedef struct uring uring;
static void ring_free(uring *r);

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
  /** The io_uring engine's ring, or NULL: the threads engine. */
  uring *ring;
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

/** An lstat job's answer into `out`: size, mtime (ms), file type. */
static void looked_up(file_job *job) {
  job->out[OUT_BYTES] = (double)job->st.stx_size;
  job->out[OUT_MTIME] = (double)job->st.stx_mtime.tv_sec * 1e3 + (double)job->st.stx_mtime.tv_nsec / 1e6;
  job->out[OUT_KIND] = (double)(job->st.stx_mode & S_IFMT);
}

/** Runs on a pool thread: system calls only, no N-API. */
static void execute(file_job *job) {
  double *out = job->out;
  errno = 0;
  int64_t t = now_ns();
  if (job->steps & STEPS_ALONE) {
    int made;
    switch (job->steps) {
      case STEP_UNLINK: made = unlink(job->path); break;
      case STEP_MKDIR: made = mkdir(job->path, (mode_t)job->mode); break;
      case STEP_LINK: made = link(job->path, job->rename_to); break;
      default:
        made = statx(AT_FDCWD, job->path, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_SIZE | STATX_MTIME, &job->st);
        if (made == 0) looked_up(job);
    }
    if (made != 0) fail(job, job->steps);
    out[OUT_OPEN] = (double)(now_ns() - t);
    return;
  }
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
  ring_free(pool->ring);
  pthread_mutex_destroy(&pool->lock);
  pthread_cond_destroy(&pool->wake);
  pthread_cond_destroy(&pool->exited);
  free(pool);
}

/** One owner lets go of the pool; the last frees it. */
static void drop_owner(job_pool *pool) {
  if (atomic_fetch_sub(&pool->owners, 1) == 1) free_pool(pool);
}

/** A pool thread leaves (called with the lock held); the last one out releases `done`. */
static void *pool_thread_ends(job_pool *pool) {
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
  return pool_thread_ends(pool);
}

// ---- The io_uring engine (open's engine 1) ----
// One thread hands every step of every job in flight to the kernel through an io_uring, one system call
// per batch, and sees their completions there. The steps that cannot block (an open of a cached path, a
// direct read, a close) run inside that call; the kernel runs the rest (a create, a direct write that
// allocates, an fsync) on its own worker threads, at most `threads` at once. No thread of ours is woken
// per job and none sleeps after it: on the 2-vCPU VM that hand-off cost more CPU than the calls
// (docs/performance.md#block-operations-per-cpu-second). A step's time runs from the moment this thread
// hands it over to the moment it sees its completion, on this one clock.
enum { ST_START, ST_OPEN, ST_CHECK, ST_DATA, ST_TRUNCATE, ST_SYNC, ST_CLOSE, ST_RENAME, ST_ALONE, ST_END };
/** IORING_OP_FTRUNCATE (Linux 6.9): the headers of older distributions do not name it; the probe says if the kernel has it. */
#define OP_FTRUNCATE (IORING_OP_SENDMSG_ZC + 7)
/** One step's longest transfer: longer ones continue as short reads and writes do. */
#define MAX_STEP_BYTES (1u << 30)

struct uring {
  int fd;
  /** An eventfd the main thread writes when it queues a job while the driving thread sleeps in the kernel. */
  int wake_fd;
  uint64_t wake_value;
  unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
  struct io_uring_sqe *sqes;
  struct io_uring_cqe *cqes;
  void *rings;
  size_t rings_size;
  size_t sqes_size;
  unsigned entries;
  /** Our submission tail (ahead of the kernel's by the entries prepared and not yet handed over). */
  unsigned tail;
  unsigned prepared;
  /** Jobs taken off the pool's queue and not finished (each has at most one step in the kernel). */
  unsigned active;
  int has_truncate;
};

static void ring_free(uring *r) {
  if (r == NULL) return;
  if (r->sqes != NULL && r->sqes != MAP_FAILED) munmap(r->sqes, r->sqes_size);
  if (r->rings != NULL && r->rings != MAP_FAILED) munmap(r->rings, r->rings_size);
  if (r->fd >= 0) close(r->fd);
  if (r->wake_fd >= 0) close(r->wake_fd);
  free(r);
}

/** A ring for `threads` workers, or NULL with `why` filled. */
static uring *ring_make(unsigned threads, char *why, size_t why_size) {
  uring *r = calloc(1, sizeof *r);
  if (r == NULL) {
    snprintf(why, why_size, "out of memory");
    return NULL;
  }
  r->fd = r->wake_fd = -1;
  unsigned entries = 64;
  while (entries < threads + 1 && entries < 4096) entries *= 2;
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  r->fd = (int)syscall(__NR_io_uring_setup, entries, &p);
  if (r->fd < 0) {
    int e = errno;
    snprintf(why, why_size, "io_uring_setup: %s%s", strerror(e),
             e == EPERM ? " (kernel.io_uring_disabled, or a seccomp filter such as a container's)" : e == ENOSYS ? " (not in this kernel)" : "");
    ring_free(r);
    return NULL;
  }
  if (!(p.features & IORING_FEAT_SINGLE_MMAP) || !(p.features & IORING_FEAT_NODROP)) {
    snprintf(why, why_size, "io_uring of this kernel is too old (Linux 5.5 or later wanted)");
    ring_free(r);
    return NULL;
  }
  r->entries = p.sq_entries;
  size_t sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  size_t cq_size = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  r->rings_size = sq_size > cq_size ? sq_size : cq_size;
  r->rings = mmap(NULL, r->rings_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
  r->sqes_size = p.sq_entries * sizeof(struct io_uring_sqe);
  r->sqes = mmap(NULL, r->sqes_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
  if (r->rings == MAP_FAILED || r->sqes == MAP_FAILED) {
    snprintf(why, why_size, "mmap of the io_uring: %s", strerror(errno));
    ring_free(r);
    return NULL;
  }
  uint8_t *base = r->rings;
  r->sq_tail = (unsigned *)(base + p.sq_off.tail);
  r->sq_mask = (unsigned *)(base + p.sq_off.ring_mask);
  r->sq_array = (unsigned *)(base + p.sq_off.array);
  r->cq_head = (unsigned *)(base + p.cq_off.head);
  r->cq_tail = (unsigned *)(base + p.cq_off.tail);
  r->cq_mask = (unsigned *)(base + p.cq_off.ring_mask);
  r->cqes = (struct io_uring_cqe *)(base + p.cq_off.cqes);
  r->tail = *r->sq_tail;
  // Every operation a job may need, else the threads engine (a seccomp filter may also refuse these).
  size_t probe_size = sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op);
  struct io_uring_probe *probe = calloc(1, probe_size);
  if (probe == NULL || syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_PROBE, probe, 256) < 0) {
    snprintf(why, why_size, "io_uring cannot say which operations it has: %s", strerror(probe == NULL ? ENOMEM : errno));
    free(probe);
    ring_free(r);
    return NULL;
  }
  const int needed[] = {IORING_OP_OPENAT, IORING_OP_STATX, IORING_OP_READ, IORING_OP_WRITE, IORING_OP_FSYNC, IORING_OP_CLOSE, IORING_OP_RENAMEAT, IORING_OP_UNLINKAT, IORING_OP_MKDIRAT, IORING_OP_LINKAT};
  for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++)
    if (needed[i] > probe->last_op || !(probe->ops[needed[i]].flags & IO_URING_OP_SUPPORTED)) {
      snprintf(why, why_size, "io_uring of this kernel lacks operation %d (Linux 5.15 or later wanted)", needed[i]);
      free(probe);
      ring_free(r);
      return NULL;
    }
  r->has_truncate = OP_FTRUNCATE <= probe->last_op && (probe->ops[OP_FTRUNCATE].flags & IO_URING_OP_SUPPORTED);
  free(probe);
  // As many calls in the kernel's workers at once as the threads engine would have threads (its default is 4 per CPU).
  unsigned workers[2] = {threads, threads};
  if (syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_IOWQ_MAX_WORKERS, workers, 2) < 0) {
    snprintf(why, why_size, "io_uring cannot set its worker count: %s (Linux 5.15 or later wanted)", strerror(errno));
    ring_free(r);
    return NULL;
  }
  r->wake_fd = eventfd(0, EFD_CLOEXEC);
  if (r->wake_fd < 0) {
    snprintf(why, why_size, "eventfd: %s", strerror(errno));
    ring_free(r);
    return NULL;
  }
  return r;
}

/** The next submission entry, zeroed; the caller keeps at most `entries` prepared or in the kernel. */
static struct io_uring_sqe *ring_entry(uring *r, void *user) {
  unsigned i = r->tail & *r->sq_mask;
  struct io_uring_sqe *sqe = &r->sqes[i];
  memset(sqe, 0, sizeof *sqe);
  sqe->user_data = (uint64_t)(uintptr_t)user;
  r->sq_array[i] = i;
  r->tail++;
  r->prepared++;
  return sqe;
}

/** Hands the prepared entries to the kernel and, if `wait`, sleeps until one completion; -1 on a failure other than EINTR. */
static int ring_enter(uring *r, int wait) {
  atomic_store_explicit((_Atomic unsigned *)r->sq_tail, r->tail, memory_order_release);
  unsigned submit = r->prepared;
  if (submit == 0 && !wait) return 0;
  long n = syscall(__NR_io_uring_enter, r->fd, submit, wait ? 1 : 0, wait ? IORING_ENTER_GETEVENTS : 0, NULL, 0);
  if (n < 0) return errno == EINTR || errno == EAGAIN || errno == EBUSY ? 0 : -1;
  r->prepared -= (unsigned)n < submit ? (unsigned)n : submit;
  return 0;
}

/** The wake-up read: completes when the main thread writes the eventfd. */
static void ring_arm_wake(uring *r) {
  struct io_uring_sqe *sqe = ring_entry(r, NULL);
  sqe->opcode = IORING_OP_READ;
  sqe->fd = r->wake_fd;
  sqe->addr = (uint64_t)(uintptr_t)&r->wake_value;
  sqe->len = sizeof r->wake_value;
}

static int job_fd(const file_job *job) { return job->fd >= 0 ? job->fd : job->opened; }

/** Whether `job` makes the call of `stage` (a failure skips all but the close of what was opened). */
static int ring_wants(const file_job *job, int stage) {
  int ok = job->error == 0;
  switch (stage) {
    case ST_OPEN: return job->fd < 0 && !(job->steps & STEPS_ALONE);
    case ST_CHECK: return ok && (job->steps & STEP_CHECK);
    case ST_DATA: return ok && (job->steps & (STEP_WRITE | STEP_READ));
    case ST_TRUNCATE: return ok && (job->steps & STEP_TRUNCATE);
    case ST_SYNC: return ok && (job->steps & (STEP_SYNC | STEP_DATASYNC));
    case ST_CLOSE: return job->opened >= 0;
    case ST_RENAME: return ok && (job->steps & STEP_RENAME);
    case ST_ALONE: return (job->steps & STEPS_ALONE) != 0;
    default: return 0;
  }
}

/** Records a failed step from an errno value. */
static void fail_with(file_job *job, int error, int step) {
  errno = error;
  fail(job, step);
}

/** Hands `job`'s call of `stage` to the ring: 1, or 0 when it was made here instead (ftruncate on kernels without it, an empty transfer). */
static int ring_issue(uring *r, file_job *job, int stage) {
  job->stage = stage;
  if (stage == ST_DATA && job->moved >= job->length) return 0;
  if (stage == ST_TRUNCATE && !r->has_truncate) {
    int64_t t = now_ns();
    if (ftruncate(job_fd(job), job->truncate_to) != 0) fail(job, STEP_TRUNCATE);
    job->out[OUT_TRUNCATE] = (double)(now_ns() - t);
    return 0;
  }
  struct io_uring_sqe *sqe = ring_entry(r, job);
  job->started = now_ns();
  switch (stage) {
    case ST_OPEN:
      sqe->opcode = IORING_OP_OPENAT;
      sqe->fd = AT_FDCWD;
      sqe->addr = (uint64_t)(uintptr_t)job->path;
      sqe->len = (unsigned)job->mode;
      sqe->open_flags = (unsigned)job->flags;
      break;
    case ST_CHECK:
      sqe->opcode = IORING_OP_STATX;
      sqe->fd = job_fd(job);
      sqe->addr = (uint64_t)(uintptr_t)"";
      sqe->len = STATX_TYPE | STATX_SIZE;
      sqe->statx_flags = AT_EMPTY_PATH;
      sqe->off = (uint64_t)(uintptr_t)&job->st; // addr2: where statx writes
      break;
    case ST_DATA: {
      size_t left = job->length - job->moved;
      sqe->opcode = (job->steps & STEP_WRITE) ? IORING_OP_WRITE : IORING_OP_READ;
      sqe->fd = job_fd(job);
      sqe->addr = (uint64_t)(uintptr_t)(job->data + job->moved);
      sqe->len = left > MAX_STEP_BYTES ? MAX_STEP_BYTES : (unsigned)left;
      sqe->off = (uint64_t)(job->position + (int64_t)job->moved);
      break;
    }
    case ST_TRUNCATE:
      sqe->opcode = OP_FTRUNCATE;
      sqe->fd = job_fd(job);
      sqe->off = (uint64_t)job->truncate_to;
      break;
    case ST_SYNC:
      sqe->opcode = IORING_OP_FSYNC;
      sqe->fd = job_fd(job);
      sqe->fsync_flags = (job->steps & STEP_SYNC) ? 0 : IORING_FSYNC_DATASYNC;
      break;
    case ST_CLOSE:
      sqe->opcode = IORING_OP_CLOSE;
      sqe->fd = job->opened;
      break;
    case ST_RENAME:
      sqe->opcode = IORING_OP_RENAMEAT;
      sqe->fd = AT_FDCWD;
      sqe->addr = (uint64_t)(uintptr_t)job->path;
      sqe->len = (unsigned)AT_FDCWD;
      sqe->off = (uint64_t)(uintptr_t)job->rename_to; // addr2: the new name
      break;
    case ST_ALONE:
      sqe->fd = AT_FDCWD;
      sqe->addr = (uint64_t)(uintptr_t)job->path;
      switch (job->steps) {
        case STEP_UNLINK: sqe->opcode = IORING_OP_UNLINKAT; break;
        case STEP_MKDIR:
          sqe->opcode = IORING_OP_MKDIRAT;
          sqe->len = (unsigned)job->mode;
          break;
        case STEP_LINK:
          sqe->opcode = IORING_OP_LINKAT;
          sqe->len = (unsigned)AT_FDCWD;
          sqe->off = (uint64_t)(uintptr_t)job->rename_to; // addr2: the new name
          break;
        default:
          sqe->opcode = IORING_OP_STATX;
          sqe->len = STATX_TYPE | STATX_SIZE | STATX_MTIME;
          sqe->statx_flags = AT_SYMLINK_NOFOLLOW;
          sqe->off = (uint64_t)(uintptr_t)&job->st; // addr2: where statx writes
      }
      break;
  }
  return 1;
}

/** Moves `job` on past its current stage: its next call to the ring, or onDone when none is left. */
static void ring_next(job_pool *pool, file_job *job) {
  uring *r = pool->ring;
  for (int stage = job->stage + 1; stage < ST_END; stage++)
    if (ring_wants(job, stage) && ring_issue(r, job, stage)) return;
  r->active--;
  napi_call_threadsafe_function(pool->done, job, napi_tsfn_nonblocking);
}

/** Where each stage's time goes in `out` (a check and a job alone count as the open: host time). */
static const int STAGE_OUT[ST_END] = {
    [ST_OPEN] = OUT_OPEN,         [ST_CHECK] = OUT_OPEN, [ST_DATA] = OUT_DATA,     [ST_TRUNCATE] = OUT_TRUNCATE,
    [ST_SYNC] = OUT_SYNC,         [ST_CLOSE] = OUT_CLOSE, [ST_RENAME] = OUT_RENAME, [ST_ALONE] = OUT_OPEN,
};

/** The step bit a failure of `stage` is reported as. */
static int stage_step(const file_job *job, int stage) {
  switch (stage) {
    case ST_OPEN: return STEP_OPEN;
    case ST_CHECK: return STEP_CHECK;
    case ST_DATA: return job->steps & (STEP_WRITE | STEP_READ);
    case ST_TRUNCATE: return STEP_TRUNCATE;
    case ST_SYNC: return job->steps & STEP_SYNC ? STEP_SYNC : STEP_DATASYNC;
    case ST_CLOSE: return STEP_CLOSE;
    case ST_RENAME: return STEP_RENAME;
    default: return job->steps & STEPS_ALONE;
  }
}

/** A completion of `job`'s current call with result `res` (a count, a descriptor, or -errno). */
static void ring_completed(job_pool *pool, file_job *job, int res) {
  job->out[STAGE_OUT[job->stage]] += (double)(now_ns() - job->started);
  int step = stage_step(job, job->stage);
  // Each stage's own reading of its result; what is left negative is the failure of `step`.
  switch (job->stage) {
    case ST_OPEN:
      if (res >= 0) {
        job->opened = res;
        res = 0;
      }
      break;
    case ST_CHECK:
      if (res >= 0 && (!S_ISREG(job->st.stx_mode) || (int64_t)job->st.stx_size != job->truncate_to)) res = -ENOENT;
      break;
    case ST_DATA:
      if (res == -EINTR || res == -EAGAIN) {
        if (ring_issue(pool->ring, job, ST_DATA)) return;
        res = 0;
      } else if (res == 0 && step == STEP_WRITE) res = -EIO;
      else if (res > 0) {
        job->moved += (size_t)res;
        if (job->moved < job->length && ring_issue(pool->ring, job, ST_DATA)) return; // a short transfer goes on
        res = 0;
      }
      job->out[OUT_BYTES] = (double)job->moved; // a read that met the end of the file stops short: the caller judges
      break;
    case ST_CLOSE:
      job->opened = -1; // closed even when close reports an error: never retried
      if (res == -EINTR) res = 0;
      break;
    case ST_ALONE:
      if (res == 0 && job->steps == STEP_LSTAT) looked_up(job);
      break;
  }
  if (res < 0) fail_with(job, -res, step);
  ring_next(pool, job);
}

/** The ring itself failed (EFAULT, EBADF: a bug of ours), not a call in it: its jobs cannot be told of, so stop loudly. */
static void ring_drive_failed(job_pool *pool, int error) {
  fprintf(stderr, "kv-cache block-io: io_uring_enter failed: %s\n", strerror(error));
  (void)pool;
  abort();
}

/** The io_uring engine's thread: jobs until the pool closes, its queue is empty and no call is in the kernel. */
static void *drive(void *data) {
  job_pool *pool = data;
  uring *r = pool->ring;
  struct sched_param none = {0};
  pthread_setschedparam(pthread_self(), SCHED_BATCH, &none); // as the threads engine's: no preemption of the event loop
  pthread_setname_np(pthread_self(), "kv-block-uring");
  ring_arm_wake(r);
  unsigned room = r->entries - 1; // one entry is the wake-up read's
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    file_job *taken = NULL, **end = &taken;
    while (pool->head != NULL && r->active < room) {
      file_job *job = pool->head;
      pool->head = job->next;
      if (pool->head == NULL) pool->tail = NULL;
      job->next = NULL;
      *end = job;
      end = &job->next;
      r->active++;
    }
    unsigned ready = atomic_load_explicit((_Atomic unsigned *)r->cq_tail, memory_order_acquire) - *r->cq_head;
    int sleep = taken == NULL && ready == 0;
    if (sleep && pool->closing && r->active == 0) break;
    if (sleep) pool->idle = 1; // submit() writes the eventfd
    pthread_mutex_unlock(&pool->lock);
    for (file_job *job = taken, *next; job != NULL; job = next) {
      next = job->next;
      job->stage = ST_START;
      job->opened = -1;
      job->moved = 0;
      errno = 0;
      ring_next(pool, job);
    }
    if (ring_enter(r, sleep) != 0) ring_drive_failed(pool, errno);
    unsigned head = *r->cq_head;
    unsigned tail = atomic_load_explicit((_Atomic unsigned *)r->cq_tail, memory_order_acquire);
    for (; head != tail; head++) {
      struct io_uring_cqe *cqe = &r->cqes[head & *r->cq_mask];
      file_job *job = (file_job *)(uintptr_t)cqe->user_data;
      int res = cqe->res;
      atomic_store_explicit((_Atomic unsigned *)r->cq_head, head + 1, memory_order_release);
      if (job == NULL) ring_arm_wake(r);
      else ring_completed(pool, job, res);
    }
    if (r->prepared > 0 && ring_enter(r, 0) != 0) ring_drive_failed(pool, errno);
    pthread_mutex_lock(&pool->lock);
    pool->idle = 0;
  }
  return pool_thread_ends(pool);
}

/** With the lock held: wakes the io_uring engine's thread if it sleeps in the kernel (its ring is alive then). */
static void wake_ring(job_pool *pool) {
  if (pool->ring == NULL || !pool->idle) return;
  pool->idle = 0;
  uint64_t one = 1;
  ssize_t n;
  do n = write(pool->ring->wake_fd, &one, sizeof one);
  while (n < 0 && errno == EINTR);
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
  wake_ring(pool);
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
  // One conversion into a stack buffer for the usual path (the length query alone walks the string
  // too); a longer one is measured, then converted again.
  char small[512];
  size_t length;
  if (napi_get_value_string_utf8(env, value, small, sizeof small, &length) != napi_ok) {
    char message[80];
    snprintf(message, sizeof message, "%s must be a string", name);
    napi_throw_type_error(env, NULL, message);
    return NULL;
  }
  // A cut stops at a whole character, so at most 3 bytes short of the buffer's 511: shorter is whole.
  int fits = length + 4 < sizeof small;
  if (!fits) napi_get_value_string_utf8(env, value, NULL, 0, &length);
  char *s = malloc(length + 1);
  if (s == NULL) {
    napi_throw_error(env, NULL, "block-io: out of memory");
    return NULL;
  }
  if (fits) memcpy(s, small, length + 1);
  else napi_get_value_string_utf8(env, value, s, length + 1, &length);
  if (strlen(s) != length) { // a NUL inside would open another file than the one named
    free(s);
    napi_throw_type_error(env, NULL, "a path must not contain NUL");
    return NULL;
  }
  return s;
}

/** `d` as a whole number within ±2^53, or 0 after throwing a RangeError naming `name`. */
static int whole_number(napi_env env, double d, const char *name, int64_t *result) {
  if (!(d >= -9007199254740991.0 && d <= 9007199254740991.0) || d != (double)(int64_t)d) {
    char message[80];
    snprintf(message, sizeof message, "%s must be an integer", name);
    napi_throw_range_error(env, NULL, message);
    return 0;
  }
  *result = (int64_t)d;
  return 1;
}

/** A whole number argument (within ±2^53); 0 after throwing. */
static int number_of(napi_env env, napi_value value, const char *name, int64_t *result) {
  double d = NAN; // not a number: whole_number throws
  napi_get_value_double(env, value, &d);
  return whole_number(env, d, name, result);
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

/** The numbers of a job as submit finds them in its `out` array (each then overwritten by the results). */
enum { IN_ID, IN_FLAGS, IN_MODE, IN_STEPS, IN_LENGTH, IN_POSITION, IN_TRUNCATE_TO, IN_FD };

/** Reads submit's arguments (path, buffer, renameTo, out: argv[1..4]) into `job`; 0 after throwing. */
static int parse(napi_env env, napi_value *argv, file_job *job) {
  int64_t id, flags, mode, steps, length, position, truncate_to, fd;
  void *data, *out;
  size_t data_length, out_length;
  if (!array_of(env, argv[2], napi_uint8_array, "buffer", &data, &data_length) ||
      !array_of(env, argv[4], napi_float64_array, "out", &out, &out_length))
    return 0;
  if (out_length < OUT_LENGTH) {
    napi_throw_range_error(env, NULL, "submit: out must hold 10 numbers");
    return 0;
  }
  // The numbers come in `out` (a native argument apiece cost more than the rest of a submit).
  const double *in = out;
  if (!whole_number(env, in[IN_ID], "id", &id) || !whole_number(env, in[IN_FLAGS], "flags", &flags) ||
      !whole_number(env, in[IN_MODE], "mode", &mode) || !whole_number(env, in[IN_STEPS], "steps", &steps) ||
      !whole_number(env, in[IN_LENGTH], "length", &length) || !whole_number(env, in[IN_POSITION], "position", &position) ||
      !whole_number(env, in[IN_TRUNCATE_TO], "truncateTo", &truncate_to) || !whole_number(env, in[IN_FD], "fd", &fd))
    return 0;
  int open_or_close_steps = STEP_OPEN | STEP_CLOSE;
  if (id < 0 || id > INT32_MAX || length < 0 || (size_t)length > data_length || position < 0 || steps < 0 ||
      steps >= STEPS_END || (steps & open_or_close_steps) ||
      ((steps & STEPS_ALONE) && ((steps & (steps - 1)) != 0 || fd != -1)) || ((steps & STEP_WRITE) && (steps & STEP_READ)) || fd < -1 || fd > INT32_MAX ||
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
  job->path = string_of(env, argv[1], "path");
  if (job->path == NULL) return 0;
  if (steps & (STEP_RENAME | STEP_LINK)) {
    job->rename_to = string_of(env, argv[3], "renameTo");
    if (job->rename_to == NULL) return 0;
  }
  return 1;
}

/** submit(pool, path, buffer, renameTo, out): a job; its numbers are in `out` (IN_ID … IN_FD), which then receives its results. */
static napi_value submit(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 5) {
    napi_throw_type_error(env, NULL, "submit takes a pool, a path, a buffer, a rename target and the numbers' array");
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
  if (pool->ring != NULL) wake_ring(pool);
  else if (pool->idle > 0) pthread_cond_signal(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

/** open(threads, onDone, engine) → a pool handle. */
static napi_value open_pool(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int64_t threads, engine = 0;
  napi_valuetype cb_type = napi_undefined;
  if (argc < 2 || !number_of(env, argv[0], "threads", &threads) || napi_typeof(env, argv[1], &cb_type) != napi_ok || cb_type != napi_function) {
    if (argc < 2 || cb_type != napi_function) napi_throw_type_error(env, NULL, "open takes a thread count and a callback");
    return NULL;
  }
  if (argc >= 3 && !number_of(env, argv[2], "engine", &engine)) return NULL;
  if (threads < 1 || threads > 1024 || engine < 0 || engine > 1) {
    napi_throw_range_error(env, NULL, "open: threads must be 1 to 1024, engine 0 (threads) or 1 (io_uring)");
    return NULL;
  }
  job_pool *pool = calloc(1, sizeof *pool);
  if (pool == NULL) {
    napi_throw_error(env, NULL, "block-io: out of memory");
    return NULL;
  }
  if (engine == 1) {
    char why[200];
    pool->ring = ring_make((unsigned)threads, why, sizeof why);
    if (pool->ring == NULL) {
      free(pool);
      napi_throw_error(env, NULL, why);
      return NULL;
    }
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
  int64_t count = pool->ring != NULL ? 1 : threads; // the io_uring engine: one thread drives the ring
  for (int64_t i = 0; i < count; i++) {
    pthread_t thread;
    if (pthread_create(&thread, &attr, pool->ring != NULL ? drive : work, pool) != 0) break;
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
