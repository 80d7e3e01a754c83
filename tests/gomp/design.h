/* design.h: what the design-point programs of libmrgomp share (design.c runs them by name;
 * design_fork.c is a program of its own). */
#ifndef MR_GOMP_DESIGN_H
#define MR_GOMP_DESIGN_H

#define _GNU_SOURCE
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MR_GOMP_PROG "design"
#include "by_name.h"

/* A threadprivate variable (design.c): its address tells the thread a task runs on. */
extern int tp_value;
#pragma omp threadprivate(tp_value)

static inline long os_tid(void) { return (long)syscall(SYS_gettid); }

/* Tasks: tied tasks, dependences, barriers and task reductions (design_tasks.c). */
int test_tied(void);
int test_depend(void);
int test_depend_release(void);
int test_depend_wavefront(void);
int test_barrier_runs_tasks(void);
int test_task_reduction(void);
int test_ordered(void);
int test_cancel_undeferred(void);
int test_depend_undeferred(void);

/* A task completes before its descendants (design_complete.c). */
int test_complete_taskwait(void);
int test_complete_depend(void);
int test_complete_undeferred(void);
int test_complete_group_owed(void);
int test_complete_group_owed_nested(void);

/* OpenMP from a context the program spawned (design_spawned.c). */
int test_spawned_member0(void);
int test_spawned_shutdown(void);
int test_current_suspend(void);
int test_current_program(void);

/* Tasks of members on threads that are not engines (design_foreign.c). */
int test_foreign_ordered(void);
int test_foreign_critical(void);

/* Teams of one thread (design_alone.c). */
int test_alone_order(void);
int test_alone_detach_depend(void);

/* A runtime with an engine left out (design_lazy.c). */
int test_lazy_absent(void);

/* Teams larger than the processors (design_over.c). */
int test_oversubscribed(void);
int test_oversubscribed_yield(void);

#endif
