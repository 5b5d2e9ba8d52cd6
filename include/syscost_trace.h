/*
 * syscost_trace.h: time-stamped events from any program, on the kernel's clock.
 *
 * Link with libsyscost_trace.a (add -lpthread -ldl -lm) or libsyscost_trace.so, built by
 * `cargo build --release -p syscost-trace` into target/release/. Every event is a
 * CLOCK_MONOTONIC_RAW timestamp (ns), the CPU, the thread id, the event id and one
 * 64-bit argument. `syscost trace record -- PROGRAM` runs PROGRAM with SYSCOST_TRACE
 * naming the file to write, which sct_open(NULL, 0) or sct_open_env() opens; `syscost
 * trace show|reduce|export FILE` reads it.
 *
 * Functions return 0 (sct_open_env: 1 when a trace was opened) or a negated errno.
 * sct_record takes no lock and makes no system call after a thread's first event;
 * when a thread's ring is full, events are counted as lost, never waited for.
 */
#ifndef SYSCOST_TRACE_H
#define SYSCOST_TRACE_H

#include <stdint.h>

#define SYSCOST_TRACE_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* The counts of the open (or, from sct_close, the closed) trace. */
struct sct_stats {
    uint64_t recorded;    /* events written to the file */
    uint64_t lost;        /* events lost because a thread's ring was full */
    uint64_t chunks;      /* chunks written */
    double event_cost_ns; /* the measured cost of one event, ns */
};

/* Opens a trace to `path` with `buffer_bytes` of ring per thread (0: 4 MiB). A NULL
 * path opens the file SYSCOST_TRACE names (-ENOENT when it names none). One trace per
 * process at a time (-EBUSY). The cost of one event is measured now. */
int sct_open(const char *path, uint64_t buffer_bytes);

/* Opens the trace SYSCOST_TRACE names: 1 if it named one, 0 if not. */
int sct_open_env(void);

/* Records event `id` with `arg` from any thread; nothing if no trace is open. */
void sct_record(uint32_t id, uint64_t arg);

/* Turns recording on (non-zero) or off (0) without closing the trace. */
int sct_enable(int on);

/* Names event `id` for the tools that read the trace. */
int sct_name(uint32_t id, const char *name);

/* The counts so far. */
int sct_stat(struct sct_stats *out);

/* Closes the trace, writing everything recorded; `out` (may be NULL) gets the totals. */
int sct_close(struct sct_stats *out);

/* CLOCK_MONOTONIC_RAW in ns: the clock of every event. */
uint64_t sct_now(void);

#ifdef __cplusplus
}
#endif

#endif /* SYSCOST_TRACE_H */
