/*
 * A late-sync shim, loaded into the server with LD_PRELOAD by the
 * durability tests (test/crash/sync-before-reply.test.ts and
 * test/crash/power-loss.test.ts, through late-sync.ts).
 *
 * Every fsync and fdatasync the process makes starts LATE_SYNC_MS
 * milliseconds late: the call sleeps first, then syncs. On a fast disk a
 * sync takes microseconds, so a reply sent after the commit but before the
 * sync (a durability bug) would still usually leave after the sync had
 * returned, and a test that reads the order of events would pass by luck.
 * With every sync started late, such a reply leaves while its data is
 * still unsynced whatever the disk's speed, and the tests see it.
 *
 *   LATE_SYNC_MS    the delay before each fsync/fdatasync (a whole number of
 *                   milliseconds, 0 to 10000; unset or empty: 0)
 *   LATE_SYNC_PATH  when set, only syncs of files whose path contains it
 *                   start late (e.g. "commit-log": the commit log's syncs
 *                   late, LMDB's on time)
 *
 * The sleep happens in the calling thread only: other threads go on writing
 * and committing, which is exactly the window the tests need. A bad
 * LATE_SYNC_MS stops the process at load, so a test cannot run without the
 * delay it asked for.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LATE_SYNC_MS_MAX 10000

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static long late_ms;
static const char *late_path;

__attribute__((constructor)) static void late_sync_init(void) {
  real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  late_path = getenv("LATE_SYNC_PATH");
  if (late_path != NULL && *late_path == '\0') late_path = NULL;
  const char *text = getenv("LATE_SYNC_MS");
  if (text == NULL || *text == '\0') return;
  char *end = NULL;
  late_ms = strtol(text, &end, 10);
  if (*end != '\0' || late_ms < 0 || late_ms > LATE_SYNC_MS_MAX) {
    fprintf(stderr, "late-sync: LATE_SYNC_MS must be a whole number of milliseconds from 0 to %d, not '%s'\n", LATE_SYNC_MS_MAX, text);
    abort();
  }
}

/* Whether the file open as fd is one whose syncs start late. */
static int delayed(int fd) {
  if (late_path == NULL) return 1;
  char link[64];
  char path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n < 0) return 0;
  path[n] = '\0';
  return strstr(path, late_path) != NULL;
}

/* Sleeps the whole delay, resuming after a signal interrupts the sleep. */
static void start_late(int fd) {
  if (late_ms == 0 || !delayed(fd)) return;
  struct timespec left = {late_ms / 1000, (late_ms % 1000) * 1000000L};
  int saved = errno;
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
  errno = saved;
}

int fsync(int fd) {
  start_late(fd);
  return real_fsync(fd);
}

int fdatasync(int fd) {
  start_late(fd);
  return real_fdatasync(fd);
}
