/*
 * pidlock.c - see pidlock.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pidlock.h"

/* The pid written in an open lock file, 0 when it holds none (yet). */
static long read_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	char *end;
	long pid;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	pid = strtol(buf, &end, 10);
	return end != buf && pid > 0 ? pid : 0;
}

int pidlock_acquire(struct pidlock *pl, const char *dir, const char *name,
		    char *err, size_t errlen)
{
	pl->fd = -1;
	if ((size_t)snprintf(pl->path, sizeof(pl->path), "%s/%s", dir, name) >= sizeof(pl->path)) {
		lwc_errf(err, errlen, "state directory path too long: %s", dir);
		return LWC_ERR_ARG;
	}
	for (int attempt = 0; attempt < 100; attempt++) {
		struct stat fs, ps;
		char line[32];
		int fd = open(pl->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600), n;

		if (fd < 0) {
			lwc_errf(err, errlen, "cannot open the lock file %s: %s", pl->path,
				 strerror(errno));
			return errno == ENOSPC ? LWC_ERR_NO_SPACE : LWC_ERR_IO;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			int e = errno;
			long pid = read_pid(fd);

			close(fd);
			if (e != EWOULDBLOCK) {
				lwc_errf(err, errlen, "cannot lock %s: %s", pl->path, strerror(e));
				return LWC_ERR_IO;
			}
			if (pid > 0)
				lwc_errf(err, errlen, "state directory %s is in use by pid %ld (lock "
					 "file %s)", dir, pid, pl->path);
			else
				lwc_errf(err, errlen, "state directory %s is in use by another "
					 "process (lock file %s)", dir, pl->path);
			return LWC_ERR_BUSY;
		}
		/* the holder before us may have unlinked the file between our open
		 * and our flock: then we locked an orphan, try again */
		if (fstat(fd, &fs) != 0 || stat(pl->path, &ps) != 0 || fs.st_ino != ps.st_ino ||
		    fs.st_dev != ps.st_dev) {
			close(fd);
			continue;
		}
		n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());
		if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n) {
			int e = errno;
			lwc_errf(err, errlen, "cannot write the lock file %s: %s", pl->path,
				 strerror(e));
			unlink(pl->path);
			close(fd);
			return e == ENOSPC ? LWC_ERR_NO_SPACE : LWC_ERR_IO;
		}
		pl->fd = fd;
		return LWC_OK;
	}
	lwc_errf(err, errlen, "cannot lock %s: it keeps being replaced", pl->path);
	return LWC_ERR_BUSY;
}

void pidlock_release(struct pidlock *pl)
{
	if (pl->fd < 0)
		return;
	unlink(pl->path);   /* still locked: nobody else can hold this inode */
	close(pl->fd);
	pl->fd = -1;
}
