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
