/*
 * A failing-sync shim, loaded into the server with LD_PRELOAD by the
 * fail-stop test (test/crash/failed-sync.test.ts, through fail-sync.ts).
 *
 * The first FAIL_SYNC_AFTER fsync/fdatasync calls on matching files sync as
 * usual; every later one on a matching file fails with EIO without syncing,
 * as on a disk that has stopped taking writes. A server that carries on
 * after the first failure, or calls fsync again hoping for success (which
 * the kernel may give for data it has already dropped), is seen: each
 * failed call writes one line to stderr,
 *
 *   fail-sync: fdatasync of /path/to/file failed with EIO (failure 1)
 *
 * so a test counts the syncs the server attempted after the first failure.
 *
 *   FAIL_SYNC_AFTER  how many syncs of matching files succeed first (a whole
 *                    number, 0 to 1000000000; required)
 *   FAIL_SYNC_PATH   when set, only files whose path contains it match (e.g.
 *                    "commit-log" or "data.mdb"); unset or empty: every file
 *
 * Calls on files that do not match pass through untouched and are not
 * counted. A bad or missing FAIL_SYNC_AFTER stops the process at load, so a
 * test cannot run without the failure it asked for.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAIL_SYNC_AFTER_MAX 1000000000L

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static long succeed_count;
static long calls;
static long failures;
static const char *fail_path;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void fail_sync_init(void) {
  real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  fail_path = getenv("FAIL_SYNC_PATH");
  if (fail_path != NULL && *fail_path == '\0') fail_path = NULL;
  const char *text = getenv("FAIL_SYNC_AFTER");
  char *end = NULL;
  succeed_count = text == NULL ? -1 : strtol(text, &end, 10);
  if (text == NULL || *text == '\0' || *end != '\0' || succeed_count < 0 || succeed_count > FAIL_SYNC_AFTER_MAX) {
    fprintf(stderr, "fail-sync: FAIL_SYNC_AFTER must be a whole number from 0 to %ld, not '%s'\n", FAIL_SYNC_AFTER_MAX, text == NULL ? "(unset)" : text);
    abort();
  }
}

/* The path of the file open as fd (empty when it cannot be read). */
static void path_of(int fd, char *path, size_t size) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, size - 1);
  path[n < 0 ? 0 : n] = '\0';
}

/*
 * Counts a matching call: 0 when it may sync, else the number of this
 * failure (1 for the first). Several threads sync at once (LMDB's write
 * thread, libuv's pool), so the count is kept under a lock.
 */
static long failure_number(const char *path) {
  if (fail_path != NULL && strstr(path, fail_path) == NULL) return 0;
  pthread_mutex_lock(&count_lock);
  long number = ++calls > succeed_count ? ++failures : 0;
  pthread_mutex_unlock(&count_lock);
  return number;
}

static int sync_or_fail(int fd, const char *name, int (*real)(int)) {
  char path[4096];
  path_of(fd, path, sizeof path);
  long number = failure_number(path);
  if (number == 0) return real(fd);
  fprintf(stderr, "fail-sync: %s of %s failed with EIO (failure %ld)\n", name, path, number);
  errno = EIO;
  return -1;
}

int fsync(int fd) {
  return sync_or_fail(fd, "fsync", real_fsync);
}

int fdatasync(int fd) {
  return sync_or_fail(fd, "fdatasync", real_fdatasync);
}
