// The one thing JavaScript cannot do for kv-cache's I/O buffers: ask the kernel to back them with
// transparent huge pages (madvise MADV_HUGEPAGE), and tell where a buffer sits relative to a 2 MiB
// boundary. Why: an O_DIRECT request's size is capped by the device's segment limit, and a buffer in
// scattered 4 KiB pages gives ~1 MiB requests where one in huge pages gives whole 4 MiB ones. How
// scattered fresh pages are grows with the machine's uptime: on a virtual disk the same run drifted by
// a third over a day, and huge-page buffers read 1.5x faster than the drifted ones.
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <node_api.h>

/** The data pointer and byte length of a typed array (on an ArrayBuffer or a SharedArrayBuffer). */
static int view_of(napi_env env, napi_value value, uint8_t **data, size_t *bytes) {
  bool is_typed = false;
  if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed) {
    napi_throw_type_error(env, NULL, "expected a typed array");
    return 0;
  }
  napi_typedarray_type type;
  size_t length = 0, offset = 0;
  void *raw = NULL;
  napi_value buffer;
  if (napi_get_typedarray_info(env, value, &type, &length, &raw, &buffer, &offset) != napi_ok) {
    napi_throw_error(env, NULL, "cannot read the typed array");
    return 0;
  }
  if (type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "expected a Uint8Array");
    return 0;
  }
  *data = raw;
  *bytes = length;
  return 1;
}

/** The call's first `needed` arguments, the first read as a Uint8Array; 0 after throwing. */
static int call_args(napi_env env, napi_callback_info info, size_t needed, napi_value *argv, uint8_t **data, size_t *bytes) {
  size_t argc = needed;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < needed) {
    napi_throw_type_error(env, NULL, "missing argument");
    return 0;
  }
  return view_of(env, argv[0], data, bytes);
}

static napi_value number(napi_env env, double v) {
  napi_value out;
  napi_create_double(env, v, &out);
  return out;
}

/** adviseHugePages(view): bytes of whole pages inside `view` advised MADV_HUGEPAGE, or -errno. */
static napi_value advise_huge_pages(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  uint8_t *data;
  size_t bytes;
  if (!call_args(env, info, 1, argv, &data, &bytes)) return NULL;
#ifdef MADV_HUGEPAGE
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t start = ((uintptr_t)data + page - 1) & ~(page - 1);
  uintptr_t end = ((uintptr_t)data + bytes) & ~(page - 1);
  if (end <= start) return number(env, 0);
  if (madvise((void *)start, end - start, MADV_HUGEPAGE) != 0) return number(env, -(double)errno);
  return number(env, (double)(end - start));
#else
  return number(env, -(double)ENOSYS);
#endif
}

/** offsetToBoundary(view, align): bytes from the view's start to the next multiple of `align` in memory. */
static napi_value offset_to_boundary(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  uint8_t *data;
  size_t bytes;
  if (!call_args(env, info, 2, argv, &data, &bytes)) return NULL;
  int64_t align = 0;
  if (napi_get_value_int64(env, argv[1], &align) != napi_ok || align <= 0 || (align & (align - 1)) != 0) {
    napi_throw_range_error(env, NULL, "align must be a power of two");
    return NULL;
  }
  uintptr_t a = (uintptr_t)align;
  return number(env, (double)((a - ((uintptr_t)data & (a - 1))) & (a - 1)));
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"adviseHugePages", NULL, advise_huge_pages, NULL, NULL, NULL, napi_enumerable, NULL},
      {"offsetToBoundary", NULL, offset_to_boundary, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
