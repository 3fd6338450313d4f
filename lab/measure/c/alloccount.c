/* alloccount: a malloc-counting LD_PRELOAD library (lab.measure.allocations).
 *
 * Contract: preloaded into a process (LD_PRELOAD), it counts every call of
 * malloc, calloc, realloc, reallocarray, free, posix_memalign, aligned_alloc,
 * memalign, valloc and pvalloc, with atomic counters, valgrind's way
 * ("total heap usage: A allocs, F frees, B bytes allocated"): an allocation is
 * every call that returns a block (a realloc too), a free every release of a
 * non-NULL block (a realloc of one too), bytes the sizes asked for. The real
 * work is glibc's (__libc_malloc and friends), so nothing is resolved lazily
 * and no allocation is made here.
 *
 * Reading it: alloccount_read(out[3]) gives allocs, frees, bytes now;
 * alloccount_mark() and alloccount_boundary() append a snapshot (kind 0 / 1)
 * to a log of ALLOCCOUNT_LOG entries, read back by alloccount_log(out, max)
 * (four values per entry: kind, allocs, frees, bytes); the lab's worker calls
 * them through ctypes. At exit, when ALLOCCOUNT_DIR names a directory, the
 * process writes <dir>/alloc.<pid>: "allocs frees bytes maxrss_kb argv0\n"
 * (maxrss_kb: the process's peak resident set, VmHWM of /proc/self/status: of
 * this program's memory alone, where getrusage's ru_maxrss keeps the peak of
 * the process it was exec'd from, the parent's when it was spawned by vfork).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

static uint64_t n_allocs, n_frees, n_bytes;

#define ALLOCCOUNT_LOG 1024
static uint64_t log_entries[ALLOCCOUNT_LOG][4];
static uint64_t log_used;

static inline void *counted(void *p, size_t size) {
    if (p) {
        __atomic_fetch_add(&n_allocs, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&n_bytes, size, __ATOMIC_RELAXED);
    }
    return p;
}

static inline void released(void *p) {
    if (p)
        __atomic_fetch_add(&n_frees, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t size) { return counted(__libc_malloc(size), size); }

void *calloc(size_t n, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return counted(__libc_calloc(n, size), total);
}

void *realloc(void *old, size_t size) {
    void *p = __libc_realloc(old, size);
    if (old && (p || size == 0))       /* moved, resized or (size 0) freed */
        released(old);
    return size == 0 && old ? p : counted(p, size);
}

void *reallocarray(void *old, size_t n, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(old, total);
}

void free(void *p) {
    released(p);
    __libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t size) {
    if (align % sizeof(void *) || (align & (align - 1)) || align == 0)
        return EINVAL;
    void *p = counted(__libc_memalign(align, size), size);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t size) { return counted(__libc_memalign(align, size), size); }
void *memalign(size_t align, size_t size) { return counted(__libc_memalign(align, size), size); }
void *valloc(size_t size) { return counted(__libc_valloc(size), size); }
void *pvalloc(size_t size) { return counted(__libc_pvalloc(size), size); }

void alloccount_read(uint64_t out[3]) {
    out[0] = __atomic_load_n(&n_allocs, __ATOMIC_RELAXED);
    out[1] = __atomic_load_n(&n_frees, __ATOMIC_RELAXED);
    out[2] = __atomic_load_n(&n_bytes, __ATOMIC_RELAXED);
}

static void snapshot(uint64_t kind) {
    uint64_t i = __atomic_fetch_add(&log_used, 1, __ATOMIC_RELAXED);
    if (i >= ALLOCCOUNT_LOG)
        return;                         /* alloccount_log reports the overflow */
    log_entries[i][0] = kind;
    alloccount_read(&log_entries[i][1]);
}

void alloccount_mark(void) { snapshot(0); }
void alloccount_boundary(void) { snapshot(1); }

/* Copies up to max entries into out (4 values each); returns the number logged
 * (more than max, or than ALLOCCOUNT_LOG, when some were lost). */
uint64_t alloccount_log(uint64_t *out, uint64_t max) {
    uint64_t n = __atomic_load_n(&log_used, __ATOMIC_RELAXED);
    uint64_t k = n < max ? n : max;
    if (k > ALLOCCOUNT_LOG)
        k = ALLOCCOUNT_LOG;
    memcpy(out, log_entries, k * sizeof log_entries[0]);
    return n;
}

static long peak_kb(void) {
    static char status[16384];
    int fd = open("/proc/self/status", O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, status, sizeof status - 1);
    close(fd);
    status[n > 0 ? n : 0] = '\0';
    const char *p = strstr(status, "VmHWM:");
    return p ? strtol(p + 6, NULL, 10) : 0;
}

__attribute__((destructor)) static void alloccount_dump(void) {
    const char *dir = getenv("ALLOCCOUNT_DIR");
    if (!dir || !*dir)
        return;
    uint64_t c[3];
    alloccount_read(c);
    long maxrss = peak_kb();
    char argv0[4096] = "";
    int fd = open("/proc/self/cmdline", O_RDONLY);
    if (fd >= 0) {
        ssize_t n = read(fd, argv0, sizeof argv0 - 1);
        argv0[n > 0 ? n : 0] = '\0';    /* the first NUL ends argv[0] */
        close(fd);
    }
    char path[4096], line[4096 + 96];
    snprintf(path, sizeof path, "%s/alloc.%ld", dir, (long)getpid());
    int len = snprintf(line, sizeof line, "%llu %llu %llu %ld %s\n", (unsigned long long)c[0],
                       (unsigned long long)c[1], (unsigned long long)c[2], maxrss, argv0);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        if (write(fd, line, (size_t)len) < 0) { /* nothing to be done at exit */ }
        close(fd);
    }
}
