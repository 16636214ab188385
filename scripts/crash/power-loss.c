/*
 * A power-loss recorder, loaded into the server with LD_PRELOAD by the
 * power-loss test (scripts/crash/kill-cycles.ts, `powerLoss`).
 *
 * SIGKILL alone loses nothing the server wrote: the kernel's page cache
 * keeps every write, synced or not. A power cut loses every write that was
 * not synced. To test the second without cutting power, this library keeps,
 * beside each file of the data directory, a copy holding only what a real
 * disk would be sure to hold: the durable image. A write to a data file is
 * recorded as pending; an fsync or fdatasync of the file (through any of its
 * descriptors: the sync is of the file, not of the descriptor) copies every
 * write that had returned before the sync began into the image; a write
 * through a descriptor opened with O_DSYNC or O_SYNC (LMDB's meta page) is
 * copied as soon as it returns. After the kill, the test puts the images in
 * place of the files and restarts: the server then finds exactly what a
 * power cut at that moment could have left, at worst.
 *
 *   POWERLOSS_DIR     the data directory (absolute path); files under it are recorded,
 *                     LMDB's lock file aside (its reader table is rebuilt on open)
 *   POWERLOSS_IMAGES  where the durable images go (one file per data file, same name)
 *
 * One lock serialises recorded writes and syncs, so that no write can slip
 * in between a sync's return and the copy it makes. It is a test tool: it
 * favours being obviously right over being fast.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define FDS_MAX 65536
#define FILES_MAX 16
#define PENDING_MAX 65536

struct file {
  char path[4096];
  int image_fd;   /* the durable image */
  int read_fd;    /* to copy synced ranges from (the server's own fd may be write-only) */
  size_t pending; /* ranges written since the last sync */
  off_t offsets[PENDING_MAX];
  size_t lengths[PENDING_MAX];
};

static struct file files[FILES_MAX];
static int file_count;
/* fd → index + 1 into files (0: not recorded); negative when the fd is O_DSYNC/O_SYNC. */
static int fd_file[FDS_MAX];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *data_dir;
static const char *images_dir;

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static void die(const char *what) {
  fprintf(stderr, "power-loss recorder: %s: %s\n", what, strerror(errno));
  abort();
}

__attribute__((constructor)) static void init(void) {
  real_open = dlsym(RTLD_NEXT, "open");
  real_openat = dlsym(RTLD_NEXT, "openat");
  real_close = dlsym(RTLD_NEXT, "close");
  real_write = dlsym(RTLD_NEXT, "write");
  real_pwrite = dlsym(RTLD_NEXT, "pwrite64");
  real_writev = dlsym(RTLD_NEXT, "writev");
  real_pwritev = dlsym(RTLD_NEXT, "pwritev64");
  real_fsync = dlsym(RTLD_NEXT, "fsync");
  real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
  data_dir = getenv("POWERLOSS_DIR");
  images_dir = getenv("POWERLOSS_IMAGES");
}

static int recorded_path(const char *path) {
  if (data_dir == NULL || images_dir == NULL || path == NULL) return 0;
  size_t n = strlen(data_dir);
  if (strncmp(path, data_dir, n) != 0 || path[n] != '/') return 0;
  const char *base = strrchr(path, '/') + 1;
  return strcmp(base, "lock.mdb") != 0;
}

/* Copies [offset, offset + length) of the file into its image. */
static void copy_range(struct file *f, off_t offset, size_t length) {
  char buf[65536];
  while (length > 0) {
    size_t want = length < sizeof buf ? length : sizeof buf;
    ssize_t got = pread(f->read_fd, buf, want, offset);
    if (got < 0) die("pread");
    if (got == 0) return; /* past the end (cannot happen for a range that was written) */
    for (ssize_t done = 0; done < got;) {
      ssize_t w = real_pwrite(f->image_fd, buf + done, (size_t)(got - done), offset + done);
      if (w < 0) die("writing the image");
      done += w;
    }
    offset += got;
    length -= (size_t)got;
  }
}

static struct file *file_for(const char *path) {
  for (int i = 0; i < file_count; i++)
    if (strcmp(files[i].path, path) == 0) return &files[i];
  if (file_count == FILES_MAX) die("too many data files");
  struct file *f = &files[file_count++];
  snprintf(f->path, sizeof f->path, "%s", path);
  char image[4096];
  snprintf(image, sizeof image, "%s/%s", images_dir, strrchr(path, '/') + 1);
  struct stat st;
  int existed = stat(image, &st) == 0;
  f->image_fd = real_open(image, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (f->image_fd < 0) die("opening the image");
  f->read_fd = real_open(path, O_RDONLY | O_CLOEXEC);
  if (f->read_fd < 0) die("opening the data file to read");
  /* A file that is already there when first opened is as durable as the
     image the test restored it from (or was made before recording began). */
  if (!existed && fstat(f->read_fd, &st) == 0 && st.st_size > 0) copy_range(f, 0, (size_t)st.st_size);
  f->pending = 0;
  return f;
}

static int track(int fd, const char *path, int flags) {
  if (fd < 0 || fd >= FDS_MAX || !recorded_path(path)) return fd;
  pthread_mutex_lock(&lock);
  int index = (int)(file_for(path) - files) + 1;
  fd_file[fd] = (flags & (O_DSYNC | O_SYNC)) ? -index : index;
  pthread_mutex_unlock(&lock);
  return fd;
}

/* The optional third argument of open and openat: the new file's mode. */
#define MODE_ARG(flags, mode)                    \
  mode_t mode = 0;                               \
  if ((flags) & (O_CREAT | O_TMPFILE)) {         \
    va_list ap;                                  \
    va_start(ap, flags);                         \
    mode = va_arg(ap, mode_t);                   \
    va_end(ap);                                  \
  }

int open(const char *path, int flags, ...) {
  MODE_ARG(flags, mode);
  return track(real_open(path, flags, mode), path, flags);
}
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat(int dirfd, const char *path, int flags, ...) {
  MODE_ARG(flags, mode);
  return track(real_openat(dirfd, path, flags, mode), path[0] == '/' ? path : NULL, flags);
}
int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));

int close(int fd) {
  if (fd >= 0 && fd < FDS_MAX && fd_file[fd] != 0) {
    pthread_mutex_lock(&lock);
    fd_file[fd] = 0;
    pthread_mutex_unlock(&lock);
  }
  return real_close(fd);
}

static struct file *recorded(int fd, int *sync_writes) {
  if (fd < 0 || fd >= FDS_MAX || fd_file[fd] == 0) return NULL;
  *sync_writes = fd_file[fd] < 0;
  return &files[abs(fd_file[fd]) - 1];
}

/* After a write of `written` bytes at `offset` returned: pending, or in the image at once (O_DSYNC). */
static void wrote(struct file *f, int sync_writes, off_t offset, ssize_t written) {
  if (written <= 0) return;
  if (sync_writes) {
    copy_range(f, offset, (size_t)written);
    return;
  }
  if (f->pending == PENDING_MAX) die("too many writes between two syncs");
  f->offsets[f->pending] = offset;
  f->lengths[f->pending] = (size_t)written;
  f->pending++;
}

/*
 * A write to a recorded file, under the lock, then recorded by `wrote`;
 * any other write goes straight through. `offset_expr` is where it writes
 * (the file position, for write and writev).
 */
#define RECORDED_WRITE(fd, offset_expr, call)              \
  do {                                                     \
    int sync_writes;                                       \
    struct file *f = recorded(fd, &sync_writes);           \
    if (f == NULL) return call;                            \
    pthread_mutex_lock(&lock);                             \
    off_t offset = (offset_expr);                          \
    ssize_t r = call;                                      \
    wrote(f, sync_writes, offset, r);                      \
    pthread_mutex_unlock(&lock);                           \
    return r;                                              \
  } while (0)

ssize_t pwrite(int fd, const void *buf, size_t n, off_t at) { RECORDED_WRITE(fd, at, real_pwrite(fd, buf, n, at)); }
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t at) __attribute__((alias("pwrite")));
ssize_t pwritev(int fd, const struct iovec *iov, int count, off_t at) { RECORDED_WRITE(fd, at, real_pwritev(fd, iov, count, at)); }
ssize_t pwritev64(int fd, const struct iovec *iov, int count, off_t at) __attribute__((alias("pwritev")));
ssize_t write(int fd, const void *buf, size_t n) { RECORDED_WRITE(fd, lseek(fd, 0, SEEK_CUR), real_write(fd, buf, n)); }
ssize_t writev(int fd, const struct iovec *iov, int count) { RECORDED_WRITE(fd, lseek(fd, 0, SEEK_CUR), real_writev(fd, iov, count)); }

/* The sync of a file: every write that returned before it began is now in the image. */
static int synced(int fd, int (*sync)(int)) {
  int sync_writes;
  struct file *f = recorded(fd, &sync_writes);
  if (f == NULL) return sync(fd);
  pthread_mutex_lock(&lock);
  int r = sync(fd);
  if (r == 0) {
    for (size_t i = 0; i < f->pending; i++) copy_range(f, f->offsets[i], f->lengths[i]);
    f->pending = 0;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

int fsync(int fd) { return synced(fd, real_fsync); }
int fdatasync(int fd) { return synced(fd, real_fdatasync); }
