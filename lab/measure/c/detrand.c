/* detrand: a deterministic entropy source for counted processes (LD_PRELOAD;
 * lab.measure.instructions, lab.measure.allocations).
 *
 * Contract: preloaded into a process, every byte it asks the system for as
 * randomness comes from one fixed pseudo-random stream (splitmix64 from a fixed
 * seed), the same in every run, so that two runs of one command do the same
 * work to the instruction. That randomness is what made counts differ between
 * runs: random table names (reftable's stack, os.urandom), temporary
 * directory names (Python's tempfile, seeded by getrandom), git's temporary
 * file names (read from /dev/urandom): strings of the same length but other
 * content, hashed into dicts and compared, so dict probes and memcmp lengths
 * differed by a few thousand instructions.
 *
 * - getrandom() and getentropy() fill the buffer from the stream (Python's
 *   os.urandom, random.Random() seeding and hash secret; never blocks, never
 *   fails).
 * - open() / open64() of "/dev/urandom" or "/dev/random" (git's
 *   csprng_bytes) give a memfd holding the next URANDOM_BYTES bytes of the
 *   stream (a read of more sees end of file); any other path goes to glibc's
 *   __open64 unchanged. The cost this adds to every open() (a few compares
 *   and a jump) is the same in every run.
 *
 * - the wall clock: clock_gettime(CLOCK_REALTIME[_COARSE]), gettimeofday() and
 *   time() read a counter, not the system's clock: CLOCK_EPOCH (1700000000, the
 *   date gitbin pins for git's identities) plus one microsecond per read, so it
 *   advances (a loop that waits for the wall clock ends) and is the same in
 *   every run. The wall clock was the last input that differed between two runs
 *   minutes apart: a float time's shortest repr (15 to 17 digits) and anything
 *   sized by it moved the heap, and with it memcmp alignments, obmalloc's pools
 *   and the type cache's slots (indexed by name addresses), by a few hundred to
 *   a few thousand instructions (git read it too). Every other clock
 *   (CLOCK_MONOTONIC, the lab's perf_counter) is the system's, unchanged: they
 *   are read as numbers, never formatted. File times stay the kernel's (later
 *   than the counter's dates: nothing a counted process writes looks stale).
 *
 * Each process starts the stream afresh (a child process too: git's temporary
 * names are then the same in each of its runs). Not for anything that needs
 * real randomness: it is a measuring instrument.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#define URANDOM_BYTES 64

extern int __open64(const char *path, int flags, ...);

static uint64_t state = 0x5265667461626c65ULL;   /* "Reftable" */

static uint64_t next(void) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void fill(void *buf, size_t n) {
    unsigned char *p = buf;
    while (n) {
        uint64_t v = next();
        size_t k = n < sizeof v ? n : sizeof v;
        memcpy(p, &v, k);
        p += k;
        n -= k;
    }
}

ssize_t getrandom(void *buf, size_t n, unsigned int flags) {
    (void)flags;
    fill(buf, n);
    return (ssize_t)n;
}

int getentropy(void *buf, size_t n) {
    fill(buf, n);
    return 0;
}

/* "/dev/urandom" or "/dev/random"; most paths differ in their second byte */
static int is_random_device(const char *path) {
    if (path[0] != '/' || path[1] != 'd')
        return 0;
    return strcmp(path, "/dev/urandom") == 0 || strcmp(path, "/dev/random") == 0;
}

static int random_fd(void) {
    unsigned char bytes[URANDOM_BYTES];
    int fd = memfd_create("detrand", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    fill(bytes, sizeof bytes);
    if (write(fd, bytes, sizeof bytes) != (ssize_t)sizeof bytes || lseek(fd, 0, SEEK_SET) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int open_any(const char *path, int flags, va_list ap) {
    mode_t mode = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
    if (is_random_device(path))
        return random_fd();
    return __open64(path, flags, mode);
}

int open(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    int fd = open_any(path, flags, ap);
    va_end(ap);
    return fd;
}

/* the same function under its large-file name */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

/* the wall clock as a counter (see the contract) */
#define CLOCK_EPOCH 1700000000LL

static long long wall_reads;

static void wall_now(struct timespec *ts) {
    long long us = wall_reads++;
    ts->tv_sec = (time_t)(CLOCK_EPOCH + us / 1000000);
    ts->tv_nsec = (long)(us % 1000000) * 1000;
}

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

int clock_gettime(clockid_t clock, struct timespec *ts) {
    static clock_gettime_fn real;
    if (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE) {
        wall_now(ts);
        return 0;
    }
    if (!real)
        real = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    return real(clock, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    struct timeval *out = tv;
    (void)tz;
    if (out) {
        struct timespec ts;
        wall_now(&ts);
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    wall_now(&ts);
    if (out)
        *out = ts.tv_sec;
    return ts.tv_sec;
}
