/*
 * pace.h - when a connection's next statement may start its access.
 *
 * The cloud store sees when each READ and WRITE comes.  From one
 * statement's last WRITE to the next statement's first READ, the proxy
 * commits, answers and reads the user's next request: work whose length
 * depends on the statement's type (an UPDATE's decisions, the index
 * entries an INSERT or a DELETE commits), so that interval alone told the
 * type of a script's statements (threat-model.md, "Timing").
 *
 * Pacing takes that interval out of the statement's hands: a connection's
 * statement starts its first READ no sooner than D after the connection's
 * last access ended.  With --pace auto (the default) D is the largest, over
 * the statement types, of the 95th percentile of the natural interval
 * after a statement of that type and of the same class of γ
 * (px_pace_class) as the connection's last one, from the intervals
 * shorter than the class's cap (longer ones are the user's own pauses) and
 * measured while the connection was alone (no other access started or
 * under way since its last one ended: with many connections at once, each
 * one's intervals are mostly the others' work, and they come later than D
 * anyway), the older ones weighing less (every count halves each
 * PX_PACE_HALF_LIFE_US, so that D follows a change of machine or load
 * within seconds); with --pace N it is N microseconds; with --pace off
 * there is none.  A statement that comes later than D is not delayed: its
 * interval is the user's.
 *
 * The cap is PX_PACE_CAP_US, or PX_PACE_CAP_MEDIANS times the largest
 * median of the class's types with enough samples if that is longer: on a
 * machine or a build slow enough that the intervals' median nears
 * PX_PACE_CAP_US (AddressSanitizer: 4.3 ms, 4 December 2026), a fixed cap
 * cut off the slowest type's tail, so D stayed short of it and that tail
 * told the type (UPDATE's, 13 % of its intervals past the pooled 95th
 * percentile against 2 % for the others).  A median only grows when half
 * the samples do, so the user's pauses, beyond the cap, do not raise it.
 *
 * A type with fewer than PX_PACE_MIN_SAMPLES samples in the class, a rare
 * one (the type a cloud would most like to spot, such as a few UPDATEs
 * among many SELECTs), counts while its last sample is less than
 * PX_PACE_RARE_US old: its median plus the widest spread from median to
 * 95th percentile of the types with enough, twice its median if none has,
 * its largest sample while it has fewer than three.  (Older, it is left
 * out, so that a few slow statements, such as the INSERTs of a load, do not
 * hold everything after them for long.)
 */
#ifndef LWC_PX_PACE_H
#define LWC_PX_PACE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define PX_PACE_KINDS 8                /* enum stmt_kind (engine_int.h)        */
#define PX_PACE_CLASSES 24             /* of γ: its log2, the last all above   */
#define PX_PACE_SUB_BITS 4u            /* log2 of the buckets a doubling       */
#define PX_PACE_SUB (1u << PX_PACE_SUB_BITS) /* 16 a doubling (pace.c)       */
#define PX_PACE_BUCKETS 208            /* from 1 us to 65 ms                   */
#define PX_PACE_CAP_US 5000u           /* a longer interval is the user's      */
#define PX_PACE_CAP_MEDIANS 4u         /* ... or than this many medians        */
#define PX_PACE_START_US 1000u         /* D before any type has its samples    */
#define PX_PACE_MIN_SAMPLES 200u       /* a type's percentile counts from then */
#define PX_PACE_HALF_LIFE_US 10000000u /* every count halves: the recent weigh */
#define PX_PACE_RARE_US 1000000u       /* a rare type counts this long after   */
#define PX_PACE_SPIN_US 300u           /* a wait's last part spins, not sleeps */

enum px_pace_mode { PX_PACE_AUTO, PX_PACE_FIXED, PX_PACE_OFF };

/* One per proxy: the intervals seen, and D. */
struct px_pacer {
	pthread_mutex_t mu;
	enum px_pace_mode mode;
	uint32_t hist[PX_PACE_CLASSES][PX_PACE_KINDS][PX_PACE_BUCKETS]; /* mu */
	uint32_t count[PX_PACE_CLASSES][PX_PACE_KINDS];                  /* mu */
	uint64_t class_n[PX_PACE_CLASSES];  /* mu: samples of each class, ever */
	uint64_t last_us[PX_PACE_CLASSES][PX_PACE_KINDS]; /* mu: its last sample */
	uint64_t halved_us;                              /* mu: last halving */
	_Atomic uint64_t target_us[PX_PACE_CLASSES]; /* D after a statement of that class */
	_Atomic uint64_t cap_us[PX_PACE_CLASSES];    /* its longest interval sampled      */
	_Atomic uint64_t paced;        /* statements held back to D              */
	_Atomic uint64_t waited_us;    /* time they were held back, in all       */
	_Atomic uint64_t over;         /* statements later than D, by < the cap  */
	_Atomic uint64_t starts;       /* accesses started                       */
	_Atomic int running;           /* accesses under way                     */
};

/* One per connection: when its last access ended, and the statement's type. */
struct px_pace {
	struct px_pacer *pacer;
	uint64_t end_us;               /* 0: no access yet                       */
	int kind;
	unsigned cls;                  /* px_pace_class of its γ                 */
	uint64_t starts_seen;          /* pacer's starts when its access ended   */
	int running;                   /* its access is under way                */
	int ended_alone;               /* no other was under way when it ended   */
};

void px_pacer_init(struct px_pacer *p, enum px_pace_mode mode, uint32_t fixed_us);
void px_pacer_fini(struct px_pacer *p);

/* Right before a statement's first READ: records the interval since the
 * connection's last access and waits until D has passed since it. */
void px_pace_wait(struct px_pace *c);
/* After a statement's access: its last WRITE was acknowledged at end_us
 * (px_now_us), and what the statement did after that counts as interval. */
void px_pace_done(struct px_pace *c, int kind, uint64_t gamma, uint64_t end_us);

/* The class of a statement of gamma blocks, its log2: the cloud sees γ, and
 * the interval after a 500-row SELECT is longer than after a point one,
 * whatever the types, so each class learns and holds its own D. */
unsigned px_pace_class(uint64_t gamma);

/* A sample: the interval of us microseconds after a statement of this kind
 * and class, at time now (px_now_us); the class's D follows (px_pace_wait's
 * own, exported for the unit tests). */
void px_pacer_sample(struct px_pacer *p, int kind, unsigned cls, uint64_t us, uint64_t now);

/* D after a statement of class cls, and the longest interval after one
 * that is sampled; the class most sampled (the proxy's status). */
uint64_t px_pacer_target(struct px_pacer *p, unsigned cls);
uint64_t px_pacer_cap(struct px_pacer *p, unsigned cls);
unsigned px_pacer_class_common(struct px_pacer *p);

/* The bucket of an interval of us microseconds, and its upper edge
 * (exported for the unit tests). */
unsigned px_pace_bucket(uint64_t us);
uint64_t px_pace_bucket_top(unsigned b);

#endif
