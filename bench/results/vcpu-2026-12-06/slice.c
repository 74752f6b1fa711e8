#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <dirent.h>
struct sa { uint32_t size, policy; uint64_t flags; int32_t nice; uint32_t prio; uint64_t runtime, deadline, period; };
int main(int argc, char **argv) {
	char p[64]; DIR *d; struct dirent *e; uint64_t ns = strtoull(argv[2], 0, 10);
	snprintf(p, sizeof p, "/proc/%s/task", argv[1]);
	if (!(d = opendir(p))) return 1;
	while ((e = readdir(d))) {
		int tid = atoi(e->d_name); if (!tid) continue;
		struct sa a; memset(&a, 0, sizeof a); syscall(SYS_sched_getattr, tid, &a, sizeof a, 0); a.size = sizeof a; a.runtime = ns; if (argc > 3 && atoi(e->d_name) == atoi(argv[3])) a.policy = 5;
		if (syscall(SYS_sched_setattr, tid, &a, 0) != 0) perror("sched_setattr");
		memset(&a, 0, sizeof a);
		syscall(SYS_sched_getattr, tid, &a, sizeof a, 0);
		printf("%d policy %u runtime %lu\n", tid, a.policy, (unsigned long)a.runtime);
	}
	return 0;
}
