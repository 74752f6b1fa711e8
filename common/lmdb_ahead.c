/*
 * lmdb_ahead.c - an LMDB data file kept ahead of its growth in page-sized
 * page-cache folios (lmdb_ahead.h says why).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lmdb_ahead.h"

#define AHEAD_CHUNK (128u << 10)      /* bytes a read */

static void *reader_main(void *arg)
{
	struct lmdb_ahead *a = arg;
	uint8_t *buf = malloc(AHEAD_CHUNK);

	pthread_mutex_lock(&a->mu);
	for (;;) {
		uint64_t from, to;

		while (!a->stop && a->done >= a->read_to)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop)
			break;
		from = a->done;
		to = a->read_to;
		pthread_mutex_unlock(&a->mu);
		/* the pages come in as holes (or data), one folio each */
		for (uint64_t off = from; buf != NULL && off < to; off += AHEAD_CHUNK)
			if (pread(a->fd, buf, AHEAD_CHUNK, (off_t)off) < 0)
				break;
		pthread_mutex_lock(&a->mu);
		a->done = to;
		pthread_cond_broadcast(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
	free(buf);
	return NULL;
}

void lmdb_ahead_init(struct lmdb_ahead *a, MDB_env *env)
{
	const char *path = NULL;
	unsigned flags = 0;
	MDB_stat ms;
	char file[4096];
	int fd;

	a->fd = -1;
	a->read_to = a->done = 0;
	a->stop = 0;
	if (mdb_env_get_path(env, &path) != 0 || path == NULL ||
	    mdb_env_get_flags(env, &flags) != 0 || mdb_env_stat(env, &ms) != 0)
		return;
	if ((size_t)snprintf(file, sizeof(file), (flags & MDB_NOSUBDIR) ? "%s" : "%s/data.mdb",
			     path) >= sizeof(file))
		return;
	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	/* reads on this descriptor bring pages in one folio each */
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	a->psize = ms.ms_psize;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	a->fd = fd;
	if (pthread_create(&a->th, NULL, reader_main, a) != 0) {
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		close(fd);
		a->fd = -1;
	}
}

void lmdb_ahead_keep(struct lmdb_ahead *a, MDB_env *env)
{
	MDB_envinfo info;
	struct stat sb;
	uint64_t used, want;
	int wfd;

	if (a->fd < 0 || mdb_env_info(env, &info) != 0 || mdb_env_get_fd(env, &wfd) != 0)
		return;
	used = ((uint64_t)info.me_last_pgno + 1) * a->psize;
	want = used + LMDB_AHEAD_WINDOW;
	pthread_mutex_lock(&a->mu);
	/* only ever longer: the writer lock keeps LMDB from writing meanwhile */
	if (a->read_to < used + LMDB_AHEAD_LOW && fstat(wfd, &sb) == 0 &&
	    ((uint64_t)sb.st_size >= want || ftruncate(wfd, (off_t)want) == 0)) {
		/* an idle reader starts again at the last page; a busy one goes
		 * on to the new end from where it is */
		if (a->done >= a->read_to && a->done < used)
			a->done = used - used % AHEAD_CHUNK;
		a->read_to = want;
		pthread_cond_broadcast(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
}

void lmdb_ahead_wait(struct lmdb_ahead *a)
{
	if (a->fd < 0)
		return;
	pthread_mutex_lock(&a->mu);
	while (a->done < a->read_to)
		pthread_cond_wait(&a->cv, &a->mu);
	pthread_mutex_unlock(&a->mu);
}

void lmdb_ahead_close(struct lmdb_ahead *a)
{
	if (a->fd < 0)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->th, NULL);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	close(a->fd);
	a->fd = -1;
}
