/*
 * admin_client.c - see admin_client.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "admin_client.h"
#include "wire.h"

#define ADMIN_ANSWER_MAX (16u << 20)
#define ADMIN_TIMEOUT_MS 30000

int admin_call(const char *path, const Lwc__AdminRequest *req, Lwc__AdminResponse **out,
	       char *err, size_t errlen)
{
	struct sockaddr_un sun;
	size_t len = lwc__admin_request__get_packed_size(req), blen;
	uint8_t *buf, *body = NULL;
	int fd, rc;

	*out = NULL;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		lwc_errf(err, errlen, "admin socket path too long: %s", path);
		return LWC_ERR_ARG;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((buf = malloc(len ? len : 1)) == NULL)
		return LWC_ERR_NOMEM;
	lwc__admin_request__pack(req, buf);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		lwc_errf(err, errlen, "cannot reach the proxy's admin socket %s: %s (is "
			 "'lwc-proxy serve' running on that state directory?)", path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		free(buf);
		return LWC_ERR_IO;
	}
	rc = wire_send_frame(fd, buf, len);
	free(buf);
	if (rc == LWC_OK)
		rc = wire_recv_frame(fd, ADMIN_ANSWER_MAX, &body, &blen, ADMIN_TIMEOUT_MS);
	close(fd);
	if (rc != LWC_OK) {
		lwc_errf(err, errlen, "admin socket %s: %s", path, lwc_strerror(rc));
		return rc;
	}
	*out = lwc__admin_response__unpack(NULL, blen, body);
	free(body);
	if (*out == NULL) {
		lwc_errf(err, errlen, "malformed answer from the admin socket %s", path);
		return LWC_ERR_PROTO;
	}
	if ((*out)->error) {
		rc = (*out)->error->code < 0 ? (*out)->error->code : LWC_ERR_PROTO;
		lwc_errf(err, errlen, "%s", (*out)->error->message && (*out)->error->message[0]
			 ? (*out)->error->message : lwc_strerror(rc));
		lwc__admin_response__free_unpacked(*out, NULL);
		*out = NULL;
		return rc;
	}
	return LWC_OK;
}

int admin_status_u64(const char *path, const char *key, uint64_t *v, char *err, size_t errlen)
{
	Lwc__AdminRequest req = LWC__ADMIN_REQUEST__INIT;
	Lwc__AdminStatus sreq = LWC__ADMIN_STATUS__INIT;
	Lwc__AdminResponse *resp = NULL;
	int rc;

	req.op_case = LWC__ADMIN_REQUEST__OP_STATUS;
	req.status = &sreq;
	if ((rc = admin_call(path, &req, &resp, err, errlen)) != LWC_OK)
		return rc;
	rc = LWC_ERR_NOT_FOUND;
	for (size_t i = 0; i < resp->n_status && rc != LWC_OK; i++) {
		const char *val = resp->status[i]->value;
		char *end;
		unsigned long long u;

		if (resp->status[i]->key == NULL || val == NULL ||
		    strcmp(resp->status[i]->key, key) != 0)
			continue;
		errno = 0;
		u = strtoull(val, &end, 10);
		if (errno == 0 && end != val) {
			*v = (uint64_t)u;
			rc = LWC_OK;
		}
	}
	if (rc != LWC_OK)
		lwc_errf(err, errlen, "the proxy's status has no number %s", key);
	lwc__admin_response__free_unpacked(resp, NULL);
	return rc;
}

int admin_wait_zero(const char *path, const char *key, double timeout_s, uint64_t *last,
		    char *err, size_t errlen)
{
	struct timespec t0, t;
	uint64_t v = 0;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((rc = admin_status_u64(path, key, &v, err, errlen)) == LWC_OK && v != 0) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >
		    timeout_s) {
			rc = LWC_ERR_TIMEOUT;
			lwc_errf(err, errlen, "the proxy's %s is still %llu after %.0f s", key,
				 (unsigned long long)v, timeout_s);
			break;
		}
		nanosleep(&(struct timespec){ 0, 200000 }, NULL);
	}
	if (last)
		*last = v;
	return rc;
}
