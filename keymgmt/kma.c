/*
 * kma.c - lwc-kma: the key authority (the paper's KMA).
 *
 *   lwc-kma init  --dir DIR
 *   lwc-kma issue --dir DIR --user NAME --proxy HOST:PORT --out NAME.key
 *                 (--proxy-socket PATH | --enroll-out NAME.enroll) [--replace]
 *   lwc-kma list  --dir DIR
 *
 * The authority holds K_U, the key every user shares for tokens and record
 * ciphertexts, and a register of the users it issued (names and dates, never
 * keys).  Issuing a user creates a fresh K_DBU, writes the user's key file
 * (K_DBU, K_U, name) and registers K_DBU at the proxy, either through the
 * proxy's admin socket or as an enrollment file for the proxy's operator.
 * It is needed only to issue users: the system runs without it.
 *
 * Directory layout (0700, files 0600):
 *   DIR/ku.key     K_U (key file kind LWC-KMA-KU)
 *   DIR/issued     one line per user: NAME TAB created TAB proxy TAB issues
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "admin_client.h"
#include "cry.h"
#include "keyfile.h"
#include "lwc.pb-c.h"
#include "userkey.h"

#define KU_KIND     "LWC-KMA-KU"
#define ISSUED_MAX  (16u << 20)

struct issued {
	char name[USERKEY_NAME_MAX + 1];
	char created[32];
	char proxy[USERKEY_PROXY_MAX];
	unsigned issues;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lwc-kma init --dir DIR\n"
		"       lwc-kma issue --dir DIR --user NAME --proxy HOST:PORT --out FILE\n"
		"                     (--proxy-socket PATH | --enroll-out FILE) [--replace]\n"
		"       lwc-kma list --dir DIR\n"
		"\n"
		"The key authority of LWC: holds K_U, issues per-user key files and registers\n"
		"each user's K_DBU at the proxy (directly through its admin socket, or as an\n"
		"enrollment file for 'lwc-proxy user add --enroll FILE').  Revoking a user is\n"
		"the proxy's job: lwc-proxy user revoke NAME.\n");
}

static void now_iso(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The authority directory must be ours alone. */
static int check_dir(const char *dir)
{
	struct stat sb;
	char path[600];

	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "lwc-kma: %s is not a key authority directory (is the authority "
			"offline or moved?  'lwc-kma init' would create a NEW K_U, unable to read "
			"the existing data: only for a new database)\n", dir);
		return -1;
	}
	if (sb.st_mode & 077) {
		fprintf(stderr, "lwc-kma: %s is accessible by group or others (mode %04o); run "
			"chmod 700 on it\n", dir, (unsigned)(sb.st_mode & 07777));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/ku.key", dir);
	if (access(path, F_OK) != 0) {
		fprintf(stderr, "lwc-kma: %s holds no key authority (no ku.key)\n", dir);
		return -1;
	}
	return 0;
}

/* ---- the register of issued users ---------------------------------------- */

static int load_issued(const char *dir, struct issued **out, size_t *n)
{
	char path[600], line[1024];
	FILE *f;
	struct issued *v = NULL;
	size_t cnt = 0, cap = 0;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "%s/issued", dir);
	if ((f = fopen(path, "r")) == NULL)
		return errno == ENOENT ? 0 : -1;
	while (fgets(line, sizeof(line), f)) {
		char *name = strtok(line, "\t\n"), *created = strtok(NULL, "\t\n");
		char *proxy = strtok(NULL, "\t\n"), *issues = strtok(NULL, "\t\n");

		if (!name || !created || !proxy || !issues)
			continue;
		if (cnt == cap) {
			void *p = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));
			if (p == NULL) {
				free(v);
				fclose(f);
				return -1;
			}
			v = p;
		}
		snprintf(v[cnt].name, sizeof(v[cnt].name), "%s", name);
		snprintf(v[cnt].created, sizeof(v[cnt].created), "%s", created);
		snprintf(v[cnt].proxy, sizeof(v[cnt].proxy), "%s", strcmp(proxy, "-") ? proxy : "");
		v[cnt].issues = (unsigned)strtoul(issues, NULL, 10);
		cnt++;
	}
	fclose(f);
	*out = v;
	*n = cnt;
	return 0;
}

/* Rewrite the register atomically (temp file, fsync, rename). */
static int save_issued(const char *dir, const struct issued *v, size_t n)
{
	char path[600], tmp[640];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/issued", dir);
	snprintf(tmp, sizeof(tmp), "%s/.issued.%ld", dir, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\t%s\t%s\t%u\n", v[i].name, v[i].created,
			v[i].proxy[0] ? v[i].proxy : "-", v[i].issues);
	if (fflush(f) != 0 || fsync(fd) != 0) {
		fclose(f);
		unlink(tmp);
		return -1;
	}
	fclose(f);
	if (rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* ---- commands ------------------------------------------------------------- */

static int cmd_init(const char *dir)
{
	char path[600], err[512] = "";
	uint8_t *ku;
	struct stat sb;

	if (stat(dir, &sb) == 0) {
		snprintf(path, sizeof(path), "%s/ku.key", dir);
		if (access(path, F_OK) == 0) {
			fprintf(stderr, "lwc-kma: %s already holds a key authority; refusing to touch it\n",
				dir);
			return 1;
		}
		if (!S_ISDIR(sb.st_mode)) {
			fprintf(stderr, "lwc-kma: %s exists and is not a directory\n", dir);
			return 1;
		}
		if (chmod(dir, 0700) != 0) {
			fprintf(stderr, "lwc-kma: chmod %s: %s\n", dir, strerror(errno));
			return 1;
		}
	} else if (mkdir(dir, 0700) != 0) {
		fprintf(stderr, "lwc-kma: cannot create %s: %s\n", dir, strerror(errno));
		return 1;
	}
	if ((ku = sodium_malloc(CRY_KEY_BYTES)) == NULL)
		return 1;
	randombytes_buf(ku, CRY_KEY_BYTES);
	snprintf(path, sizeof(path), "%s/ku.key", dir);
	if (keyfile_write(path, KU_KIND, "LWC key authority: K_U, shared by every user - keep it "
			  "secret", ku, CRY_KEY_BYTES, err, sizeof(err)) != LWC_OK) {
		fprintf(stderr, "lwc-kma: %s\n", err);
		sodium_free(ku);
		return 1;
	}
	sodium_free(ku);
	if (save_issued(dir, NULL, 0) != 0) {
		fprintf(stderr, "lwc-kma: cannot write %s/issued: %s\n", dir, strerror(errno));
		return 1;
	}
	printf("key authority created in %s (K_U in %s, mode 0600)\n", dir, path);
	printf("keep this directory offline; it is needed only to issue users\n");
	return 0;
}

static int cmd_issue(const char *dir, const char *user, const char *proxy, const char *out,
		     const char *sock, const char *enroll, int replace)
{
	struct issued *v = NULL;
	size_t n = 0, idx = (size_t)-1;
	struct userkey *uk = NULL;
	char path[600], err[600] = "", when[32];
	int rc = 1, lockfd = -1;

	if (check_dir(dir) != 0)
		return 1;
	if (!userkey_name_valid(user)) {
		fprintf(stderr, "lwc-kma: invalid user name '%s' (1-64 of letters, digits, _ . @ -; "
			"not starting with - or .)\n", user);
		return 1;
	}
	if ((sock != NULL) == (enroll != NULL)) {
		fprintf(stderr, "lwc-kma issue: give --proxy-socket PATH (register now) or "
			"--enroll-out FILE (for the proxy's operator)\n");
		return 1;
	}
	if (access(out, F_OK) == 0) {
		fprintf(stderr, "lwc-kma: %s exists; key files are never overwritten (move it away "
			"first)\n", out);
		return 1;
	}
	if (enroll && access(enroll, F_OK) == 0) {
		fprintf(stderr, "lwc-kma: %s exists; refusing to overwrite it\n", enroll);
		return 1;
	}
	/* one issue at a time: the register is read, then rewritten */
	snprintf(path, sizeof(path), "%s/.lock", dir);
	if ((lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0 ||
	    flock(lockfd, LOCK_EX) != 0) {
		fprintf(stderr, "lwc-kma: cannot lock %s: %s\n", path, strerror(errno));
		if (lockfd >= 0)
			close(lockfd);
		return 1;
	}
	if (load_issued(dir, &v, &n) != 0) {
		fprintf(stderr, "lwc-kma: cannot read %s/issued: %s\n", dir, strerror(errno));
		close(lockfd);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, user) == 0)
			idx = i;
	if (idx != (size_t)-1 && !replace) {
		fprintf(stderr, "lwc-kma: user %s was already issued on %s (use --replace to issue "
			"a new key, which also re-registers it at the proxy)\n", user, v[idx].created);
		goto out;
	}
	if (userkey_new(&uk) != LWC_OK)
		goto out;
	snprintf(uk->name, sizeof(uk->name), "%s", user);
	snprintf(uk->proxy, sizeof(uk->proxy), "%s", proxy);
	snprintf(path, sizeof(path), "%s/ku.key", dir);
	if (keyfile_read(path, KU_KIND, uk->ku, CRY_KEY_BYTES, err, sizeof(err)) != LWC_OK) {
		fprintf(stderr, "lwc-kma: %s\n", err);
		goto out;
	}
	randombytes_buf(uk->kdbu, sizeof(uk->kdbu));
	if (userkey_write(out, uk, err, sizeof(err)) != LWC_OK) {
		fprintf(stderr, "lwc-kma: %s\n", err);
		goto out;
	}
	if (sock) {
		Lwc__AdminRequest req = LWC__ADMIN_REQUEST__INIT;
		Lwc__AdminUserAdd add = LWC__ADMIN_USER_ADD__INIT;
		Lwc__AdminResponse *resp = NULL;

		add.name = uk->name;
		add.key.data = uk->kdbu;
		add.key.len = sizeof(uk->kdbu);
		add.replace = replace;
		req.op_case = LWC__ADMIN_REQUEST__OP_USER_ADD;
		req.user_add = &add;
		if (admin_call(sock, &req, &resp, err, sizeof(err)) != LWC_OK) {
			fprintf(stderr, "lwc-kma: registering %s at the proxy failed: %s\n", user, err);
			unlink(out);       /* a key the proxy does not know is useless */
			goto out;
		}
		printf("registered at the proxy: %s\n", resp->message);
		lwc__admin_response__free_unpacked(resp, NULL);
	} else {
		if (enroll_write(enroll, uk->name, uk->kdbu, err, sizeof(err)) != LWC_OK) {
			fprintf(stderr, "lwc-kma: %s\n", err);
			unlink(out);
			goto out;
		}
		printf("enrollment written to %s: on the proxy host run\n"
		       "  lwc-proxy user add --state DIR --enroll %s%s\n", enroll, enroll,
		       replace ? " --replace" : "");
	}
	now_iso(when, sizeof(when));
	if (idx == (size_t)-1) {
		void *p = realloc(v, (n + 1) * sizeof(*v));
		if (p == NULL)
			goto out;
		v = p;
		idx = n++;
		memset(&v[idx], 0, sizeof(v[idx]));
		snprintf(v[idx].name, sizeof(v[idx].name), "%s", user);
	}
	snprintf(v[idx].created, sizeof(v[idx].created), "%s", when);
	snprintf(v[idx].proxy, sizeof(v[idx].proxy), "%s", proxy);
	v[idx].issues++;
	if (save_issued(dir, v, n) != 0) {
		fprintf(stderr, "lwc-kma: the key was issued but %s/issued could not be updated: %s\n",
			dir, strerror(errno));
		goto out;
	}
	printf("issued user %s: key file %s (mode 0600) - hand it to the user over a secure "
	       "channel\n", user, out);
	rc = 0;
out:
	userkey_free(uk);
	free(v);
	if (lockfd >= 0)
		close(lockfd);             /* releases the lock */
	return rc;
}

static int cmd_list(const char *dir)
{
	struct issued *v = NULL;
	size_t n = 0;

	if (check_dir(dir) != 0)
		return 1;
	if (load_issued(dir, &v, &n) != 0) {
		fprintf(stderr, "lwc-kma: cannot read %s/issued: %s\n", dir, strerror(errno));
		return 1;
	}
	printf("%-24s %-21s %-24s %s\n", "user", "issued", "proxy", "keys issued");
	for (size_t i = 0; i < n; i++)
		printf("%-24s %-21s %-24s %u\n", v[i].name, v[i].created,
		       v[i].proxy[0] ? v[i].proxy : "-", v[i].issues);
	printf("(%zu user%s; revocations are kept by the proxy: lwc-proxy user list)\n", n,
	       n == 1 ? "" : "s");
	free(v);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "user", required_argument, NULL, 'u' },
		{ "proxy", required_argument, NULL, 'p' },
		{ "out", required_argument, NULL, 'o' },
		{ "proxy-socket", required_argument, NULL, 's' },
		{ "enroll-out", required_argument, NULL, 'e' },
		{ "replace", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd, *dir = NULL, *user = NULL, *proxy = NULL, *out = NULL, *sock = NULL;
	const char *enroll = NULL;
	int replace = 0, o;

	if (sodium_init() < 0) {
		fprintf(stderr, "lwc-kma: libsodium failed to initialise\n");
		return 1;
	}
	umask(077);
	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
		usage(stdout);
		return 0;
	}
	optind = 2;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'd': dir = optarg; break;
		case 'u': user = optarg; break;
		case 'p': proxy = optarg; break;
		case 'o': out = optarg; break;
		case 's': sock = optarg; break;
		case 'e': enroll = optarg; break;
		case 'r': replace = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (optind != argc || dir == NULL) {
		fprintf(stderr, "lwc-kma %s: --dir DIR is required\n", cmd);
		return 1;
	}
	if (strcmp(cmd, "init") == 0)
		return cmd_init(dir);
	if (strcmp(cmd, "list") == 0)
		return cmd_list(dir);
	if (strcmp(cmd, "issue") == 0) {
		if (!user || !proxy || !out) {
			fprintf(stderr, "lwc-kma issue: --user, --proxy and --out are required\n");
			return 1;
		}
		return cmd_issue(dir, user, proxy, out, sock, enroll, replace);
	}
	fprintf(stderr, "lwc-kma: unknown command '%s'\n", cmd);
	usage(stderr);
	return 1;
}
